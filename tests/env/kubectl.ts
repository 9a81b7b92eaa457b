import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ControlPlaneState } from './control-plane.js';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  stdin?: string;
  /** Impersonate this user (admin credentials + `--as`). */
  asUser?: string;
  asGroups?: string[];
  kubeconfigPath?: string;
  timeoutMs?: number;
}

/** Run the version-matched kubectl built with the control plane against it. */
export function runKubectl(state: Pick<ControlPlaneState, 'binDir' | 'kubeconfigPath'>, args: string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  const full = [`--kubeconfig=${opts.kubeconfigPath ?? state.kubeconfigPath}`];
  if (opts.asUser !== undefined) full.push(`--as=${opts.asUser}`);
  for (const g of opts.asGroups ?? []) full.push(`--as-group=${g}`);
  full.push(...args);
  return new Promise((resolve, reject) => {
    const child = spawn(join(state.binDir, 'kubectl'), full, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not run kubectl: ${err.message}`, { cause: err }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    // kubectl may end before it reads its input (a flag error, the timeout's kill): the write then fails
    // with EPIPE, which must not throw out of the caller's process (npm start died of one); its exit code says why.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.stdin ?? '');
  });
}
