/**
 * Processes under benchmark: a function compiled the way it ships (tsc, then plain node), the same
 * function run from source with tsx, and a bare node:http server as the floor.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { listeningPort, REPO_ROOT, send, startNodeProcess, type FunctionProcess } from '../../shared/runtime/testing/index.js';
import { nowMs } from './lib.js';

const run = promisify(execFile);

/** Where benchmark builds go: inside `dist/` (ignored by git), apart from `npm run build`'s output. */
const BUILD_DIR = join(REPO_ROOT, 'dist', '.bench');

/**
 * Compile one function entry module (and only what it imports) with the build settings, as the image
 * would run it; returns node's arguments for the compiled module.
 */
export async function compiledArgs(entry: string): Promise<string[]> {
  await mkdir(BUILD_DIR, { recursive: true });
  const tsconfig = join(BUILD_DIR, 'tsconfig.json');
  const config = {
    extends: '../../tsconfig.build.json',
    compilerOptions: { outDir: '.', rootDir: '../..', noEmit: false, sourceMap: false },
    include: [],
    files: [join('../..', entry)],
  };
  await writeFile(tsconfig, JSON.stringify(config, null, 2));
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  // tsc emits even with type errors elsewhere; only a missing output fails the benchmark.
  await run(process.execPath, [tsc, '-p', tsconfig]).catch(() => undefined);
  const output = join(BUILD_DIR, entry.replace(/\.ts$/, '.js'));
  if (!existsSync(output)) throw new Error(`compiling ${entry} produced no ${output}`);
  return [output];
}

export function tsxArgs(entry: string): string[] {
  return ['--import', 'tsx', entry];
}

/** A bare node:http server answering 204 (200 on the readiness path) and logging its port like the host. */
const BARE_SERVER = `
import { createServer } from 'node:http';
const server = createServer((req, res) => { res.statusCode = req.url === '/health/readiness' ? 200 : 204; res.end(); });
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ msg: 'listening', port: server.address().port }) + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export const BARE_ARGS: readonly string[] = ['--input-type=module', '-e', BARE_SERVER];

export interface Running {
  readonly proc: FunctionProcess;
  readonly url: string;
  stop(): Promise<void>;
}

/** Start a server process on a free loopback port and wait until its readiness path answers 200. */
export async function startServer(args: readonly string[], env: Record<string, string> = {}): Promise<Running> {
  const proc = startNodeProcess(args, { env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env } });
  try {
    const url = `http://127.0.0.1:${await listeningPort(proc)}`;
    await untilReady(`${url}/health/readiness`);
    return { proc, url, stop: () => stop(proc) };
  } catch (err: unknown) {
    proc.kill();
    throw err;
  }
}

/** Milliseconds from spawn to the first 200 on /health/readiness. */
export async function coldStartMs(args: readonly string[]): Promise<number> {
  const start = nowMs();
  const server = await startServer(args);
  const ms = nowMs() - start;
  await server.stop();
  return ms;
}

async function untilReady(url: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const status = await send(url).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`${url} never answered 200`);
}

async function stop(proc: FunctionProcess): Promise<void> {
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill(), 10_000);
  await proc.exited;
  clearTimeout(timer);
}
