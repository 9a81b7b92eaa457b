/**
 * An isolated Docker engine for the image tests: Debian's `dockerd` with its own socket and exec root
 * under /run/virt-testenv-dockerd, its own data root in the test cache (images and build layers stay
 * between runs), and no host networking changes (`--bridge=none --iptables=false --ip-masq=false`):
 * builds and containers use the host's network namespace. The machine's own Docker, if any, is not
 * touched. One engine at a time uses the data root: a run waits for another checkout's run to finish.
 * `dockerdUnavailable()` says why an engine cannot run here at all (then the tests skip).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { cacheRoot } from './cache.js';
import { spawnLogged, tailLog, type LoggedProcess } from '../process.js';
import { waitFor } from '../../../shared/testing/wait.js';

export const DOCKERD_BINARY = '/usr/sbin/dockerd';
/** Debian's client, of the same release as the engine (another `docker` on PATH may be newer). */
export const DOCKER_CLI = '/usr/bin/docker';
export const EXEC_ROOT = '/run/virt-testenv-dockerd';
const START_TIMEOUT_MS = 120_000;
/** How long a run waits for another checkout's run to release the engine. */
const OTHER_RUN_TIMEOUT_MS = 40 * 60_000;

export interface DockerResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Dockerd {
  /** `unix://...`, for DOCKER_HOST. */
  readonly host: string;
  readonly logPath: string;
  /** Runs the Debian client against this engine; never throws for a non-zero exit. */
  docker(args: readonly string[], opts?: { env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<DockerResult>;
  /** SIGTERM (the engine stops its containers), SIGKILL after 30 s. */
  stop(): Promise<void>;
}

/** Why no engine can run on this machine, or undefined when one can. */
export function dockerdUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `dockerd runs on Linux only (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'dockerd needs root (the tests run as a user without it)';
  for (const bin of [DOCKERD_BINARY, DOCKER_CLI]) {
    if (!existsSync(bin)) return `${bin} is missing: tests/env/install-deps.sh installs Debian's docker.io`;
  }
  return undefined;
}

export function runDocker(host: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<DockerResult> {
  return new Promise((resolve) => {
    execFile(
      DOCKER_CLI,
      [...args],
      {
        env: { ...process.env, ...opts.env, DOCKER_HOST: host },
        maxBuffer: 256 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 0,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr: err !== null && code === -1 ? `${stderr}${err.message}` : stderr });
      },
    );
  });
}

/** A dockerd of an earlier run still alive (its pid file names a live process), or undefined. */
function runningPid(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** The parent of `pid`, from /proc (undefined when it cannot be read). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function isNode(pid: number | undefined): boolean {
  if (pid === undefined || pid <= 1) return false;
  try {
    return basename(readlinkSync(`/proc/${pid}/exe`)) === 'node';
  } catch {
    return false;
  }
}

/**
 * One engine per data root. Another checkout's test run that holds it (its dockerd's parent is a live
 * node process) is waited for; a dockerd left behind by a run that died (orphaned) is stopped.
 */
async function waitForOtherRun(pidFile: string, dir: string): Promise<void> {
  const other = runningPid(pidFile);
  if (other === undefined) return;
  if (!isNode(parentOf(other))) {
    process.stderr.write(`[dockerd] stopping pid ${other}, left behind by an earlier run (${pidFile})\n`);
    process.kill(other, 'SIGTERM');
  } else {
    process.stderr.write(`[dockerd] waiting for another test run's dockerd (pid ${other}) to finish with ${dir}\n`);
  }
  await waitFor(`dockerd pid ${other} (${pidFile}) to end`, () => Promise.resolve(runningPid(pidFile) === undefined), {
    timeoutMs: OTHER_RUN_TIMEOUT_MS,
    intervalMs: 1_000,
  });
}

/** Starts the isolated engine and waits until it answers on its socket. */
export async function startDockerd(): Promise<Dockerd> {
  const unavailable = dockerdUnavailable();
  if (unavailable !== undefined) throw new Error(`cannot start dockerd: ${unavailable}`);
  const dir = join(cacheRoot(), 'dockerd');
  mkdirSync(join(dir, 'data'), { recursive: true });
  mkdirSync(EXEC_ROOT, { recursive: true, mode: 0o700 });
  const pidFile = join(EXEC_ROOT, 'dockerd.pid');
  await waitForOtherRun(pidFile, dir);
  const host = `unix://${join(EXEC_ROOT, 'docker.sock')}`;
  const logPath = join(dir, 'dockerd.log');
  const proc: LoggedProcess = spawnLogged(
    'dockerd',
    DOCKERD_BINARY,
    [
      `--host=${host}`,
      `--data-root=${join(dir, 'data')}`,
      `--exec-root=${EXEC_ROOT}`,
      `--pidfile=${pidFile}`,
      '--bridge=none',
      '--iptables=false',
      '--ip-masq=false',
      '--storage-driver=overlay2',
    ],
    logPath,
  );
  const docker: Dockerd['docker'] = (args, opts) => runDocker(host, args, opts);
  try {
    await waitFor('dockerd', async () => (await docker(['version', '--format', '{{.Server.Version}}'])).code === 0, {
      timeoutMs: START_TIMEOUT_MS,
      intervalMs: 250,
      abortIf: () => (proc.hasExited() ? `exited while starting; log ${logPath}:\n${tailLog(logPath)}` : undefined),
    });
  } catch (err) {
    await proc.stop(30_000);
    throw err;
  }
  return { host, logPath, docker, stop: () => proc.stop(30_000) };
}
