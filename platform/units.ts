/**
 * Our functions and daemons as local processes, one process each (so signals reach it), each with its
 * own environment (never the caller's KUBECONFIG), its own log file and a readiness probe. A unit
 * that exits while starting fails the start with its log file named.
 *
 * The sources run as they are, bundled first with esbuild (shared/bundle: one file per unit, npm
 * packages left as imports): a unit then starts with a third of the CPU that `node --import tsx`
 * needs to transform its files one by one, which counts on two busy cores. Should bundling fail, tsx
 * runs them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IMAGE_ENV } from '../shared/bundle/image-env.js';
import { bundleEntries } from '../shared/bundle/index.js';
import { spawnLogged, tailLog, type LoggedProcess } from '../tests/env/process.js';
import type { Supervisor } from './supervisor.js';
import { waitFor } from '../shared/testing/wait.js';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const START_TIMEOUT_MS = Number(process.env['VIRT_PLATFORM_UNIT_TIMEOUT_MS'] ?? 120_000);

/** What a unit process inherits from the platform's environment; everything else is given explicitly. */
const INHERITED = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ', 'TSX_TSCONFIG_PATH'];

export interface UnitSpec {
  /** The unit's name, as in the README's Units table; its log is `<name>.log`. */
  readonly name: string;
  /** Entry file, relative to the repository root. */
  readonly entry: string;
  readonly env: Readonly<Record<string, string>>;
  /** Resolves true once the unit serves; polled until then. */
  readonly ready: () => Promise<boolean>;
  /** Stop it only after this process (see Supervisor.add). */
  readonly outlives?: string;
}

export interface Bundles {
  /** entry (relative to the repository) → bundled file */
  readonly files: ReadonlyMap<string, string>;
  remove(): Promise<void>;
}

/**
 * One ESM bundle per entry under node_modules/.cache/virt-platform/<pid>/ (inside the repository, so
 * that the bundles resolve the npm packages they import); undefined when esbuild fails.
 */
export const BUNDLE_ROOT = join(REPO_ROOT, 'node_modules', '.cache', 'virt-platform');

export async function bundleUnits(entries: readonly string[]): Promise<Bundles | undefined> {
  const dir = join(BUNDLE_ROOT, String(process.pid));
  try {
    const files = await bundleEntries({ root: REPO_ROOT, entries, outdir: dir, packages: 'external', sourcemap: true });
    return { files, remove: () => rm(dir, { recursive: true, force: true }) };
  } catch {
    await rm(dir, { recursive: true, force: true });
    return undefined;
  }
}

export function startUnit(spec: UnitSpec, opts: { logDir: string; supervisor: Supervisor; bundles?: Bundles | undefined }): LoggedProcess {
  const env: NodeJS.ProcessEnv = { NODE_ENV: 'production', LOG_LEVEL: 'info', ...IMAGE_ENV };
  for (const key of INHERITED) if (process.env[key] !== undefined) env[key] = process.env[key];
  Object.assign(env, spec.env);
  const logPath = join(opts.logDir, `${spec.name}.log`);
  const bundled = opts.bundles?.files.get(spec.entry);
  const args = bundled !== undefined ? ['--enable-source-maps', bundled] : ['--import', 'tsx', spec.entry];
  const proc = spawnLogged(spec.name, process.execPath, args, logPath, { env, cwd: REPO_ROOT, detached: true });
  return opts.supervisor.add(proc, spec.outlives !== undefined ? { outlives: spec.outlives } : {});
}

export async function waitReady(spec: UnitSpec, proc: LoggedProcess): Promise<void> {
  await waitFor(`${spec.name} ready`, spec.ready, {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 200,
    abortIf: () => (proc.hasExited() ? `${spec.name} exited while starting; its log ${proc.logPath} ends with:\n${tailLog(proc.logPath, 15)}` : undefined),
  });
}

/** GET `url` over HTTP(S) without checking the certificate: the status code, 0 when nothing answers. */
export function statusOf(url: string): Promise<number> {
  if (url.startsWith('http:')) {
    return fetch(url).then(
      (r) => r.status,
      () => 0,
    );
  }
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Whether a JSON log file has a line whose `msg` is `message`. */
export function logHas(path: string, message: string): boolean {
  if (!existsSync(path)) return false;
  return readFileSync(path, 'utf8').includes(`"msg":${JSON.stringify(message)}`);
}

/**
 * The number under `key` in the first line of a JSON log whose `msg` is `message`: the port a unit
 * bound when it was given port 0 (the function host logs `listening` with `port`, the controller
 * `started: health and metrics served` with `healthPort`). Units pick their own ports this way, so a
 * port taken by anything else can never fail their start.
 */
export function numberFromLog(path: string, message: string, key: string): number | undefined {
  if (!existsSync(path)) return undefined;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.includes(`"msg":${JSON.stringify(message)}`)) continue;
    try {
      const value = (JSON.parse(line) as Record<string, unknown>)[key];
      return typeof value === 'number' ? value : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
