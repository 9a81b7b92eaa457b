/**
 * The `d8v` command as a user runs it: the package's bin entry (shared/cli/d8v.js) in a child
 * process, with a kubeconfig from the environment or the command line.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { getTestEnv, impersonatingKubeConfig } from '../../env/index.js';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const D8V = join(ROOT, 'shared', 'cli', 'd8v.js');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `d8v args...` with KUBECONFIG pointing at the test apiserver's admin (or `kubeconfig`). */
export function d8v(args: readonly string[], opts: { kubeconfig?: string } = {}): Promise<Ran> {
  const child = spawn(process.execPath, [D8V, ...args], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', KUBECONFIG: opts.kubeconfig ?? getTestEnv().kubeconfigPath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

/** A kubeconfig file (`as:` impersonation, which kubectl honours too) for `user` of the test apiserver
 *  (or of the apiserver of the admin kubeconfig `base`). */
export async function kubeconfigFileFor(user: string, dir: string, base?: string): Promise<string> {
  const path = join(dir, `${user.replace(/[^\w.-]/g, '_')}.kubeconfig`);
  await writeFile(path, impersonatingKubeConfig(user, base).exportConfig(), { mode: 0o600 });
  return path;
}
