/**
 * Fixtures for the importer's tests and benchmark (not shipped behaviour): disk images made with the
 * real qemu-img, a static HTTP server for them (with a route that breaks off mid-body), and a context
 * to run the pipeline in-process.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { childLogger } from '../../shared/log/index.js';
import { loadConfig } from './config.js';
import { ImportError } from './errors.js';
import { Progress } from './progress.js';
import type { ImportContext } from './run.js';

/** A raw image of `mib` MiB with some non-zero data at the start and in the middle, converted to `format`. */
export function makeImage(dir: string, name: string, format: 'raw' | 'qcow2' | 'vmdk' | 'vdi', mib: number): string {
  const raw = join(dir, `${name}.src.raw`);
  execFileSync('qemu-img', ['create', '-q', '-f', 'raw', raw, `${mib}M`]);
  const data = Buffer.alloc(256 << 10);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + 13) & 0xff;
  writeFileSync(raw, data, { flag: 'r+' });
  const out = join(dir, name);
  execFileSync('qemu-img', ['convert', '-q', '-f', 'raw', '-O', format, raw, out]);
  return out;
}

export interface FileServer {
  readonly url: string;
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * Serve the files of `dir` with Content-Length. `/broken/<file>` announces the whole file and closes
 * the connection after half of it; `/stall/<file>` sends 4 KiB of it and then nothing; `/status/<code>`
 * answers that status.
 */
export async function serveDir(dir: string): Promise<FileServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0] ?? '/');
    requests.push(path);
    const status = /^\/status\/(\d{3})$/.exec(path);
    if (status) return void res.writeHead(Number(status[1])).end('nope');
    const broken = path.startsWith('/broken/');
    const stall = path.startsWith('/stall/');
    const file = join(dir, broken || stall ? path.slice(path.indexOf('/', 1)) : path);
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      return void res.writeHead(404).end('not found');
    }
    res.writeHead(200, { 'content-length': size, 'content-type': 'application/octet-stream' });
    if (stall) res.write(Buffer.alloc(4096));
    else if (broken)
      createReadStream(file, { end: Math.floor(size / 2) })
        .on('end', () => res.destroy())
        .pipe(res, { end: false });
    else createReadStream(file, { highWaterMark: 1 << 20 }).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** An in-process run's context from importer env keys (LOG_LEVEL silent unless given). */
export function contextFor(env: Record<string, string>, signal: AbortSignal = new AbortController().signal): ImportContext {
  const config = loadConfig({ LOG_LEVEL: 'silent', IMPORTER_TERMINATION_LOG: '/dev/null', ...env });
  const log = childLogger({ component: 'importer-test' });
  log.level = config.LOG_LEVEL;
  return { config, signal, log, progress: new Progress(log, config.IMPORTER_PROGRESS_INTERVAL) };
}

/** The ImportError a run failed with; throws when it succeeded or failed with anything else. */
export async function importFailure(run: Promise<unknown>): Promise<ImportError> {
  const outcome = await run.then(
    (value: unknown) => ({ value }),
    (err: unknown) => ({ err }),
  );
  if ('err' in outcome && outcome.err instanceof ImportError) return outcome.err;
  throw new Error(`expected the run to fail with an ImportError, got ${'err' in outcome ? String(outcome.err) : `success ${JSON.stringify(outcome.value)}`}`);
}
