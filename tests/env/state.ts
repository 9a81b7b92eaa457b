import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlaneState } from './control-plane.js';

/** The environment variable through which jest workers find the control plane's state.json. */
export const STATE_ENV = 'VIRT_TESTENV_STATE';

let cached: ControlPlaneState | undefined;

export function readState(): ControlPlaneState {
  if (cached !== undefined) return cached;
  const path = process.env[STATE_ENV];
  if (path === undefined) {
    throw new Error(`${STATE_ENV} is not set: run tests through jest (globalSetup starts the control plane)`);
  }
  cached = JSON.parse(readFileSync(path, 'utf8')) as ControlPlaneState;
  return cached;
}

/** Record a process started by a test worker so that teardown kills it even if the test did not. */
export async function registerExtra(workDir: string, name: string, pid: number): Promise<void> {
  const dir = join(workDir, 'extra-pids');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${name}-${pid}`), String(pid));
}

export async function unregisterExtra(workDir: string, name: string, pid: number): Promise<void> {
  await rm(join(workDir, 'extra-pids', `${name}-${pid}`), { force: true });
}

export async function killRegisteredExtras(workDir: string): Promise<void> {
  const dir = join(workDir, 'extra-pids');
  const files = await readdir(dir).catch(() => [] as string[]);
  for (const f of files) {
    const pid = Number(await readFile(join(dir, f), 'utf8'));
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
