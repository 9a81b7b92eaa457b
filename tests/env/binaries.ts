import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./build-binaries.sh', import.meta.url));

/**
 * Ensure kube-apiserver, kubectl and etcd are built (cached outside the repo, keyed by version) and
 * return their directory. Progress of a cold build goes to stderr; a failure names the step.
 */
export function ensureBinaries(): Promise<string> {
  if (process.env['VIRT_TESTENV_BIN_DIR']) return Promise.resolve(process.env['VIRT_TESTENV_BIN_DIR']);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('error', (err) => reject(new Error(`could not run ${SCRIPT}: ${err.message}`, { cause: err })));
    child.on('exit', (code) => {
      const dir = out.trim().split('\n').pop() ?? '';
      if (code === 0 && dir !== '') resolve(dir);
      else reject(new Error(`building the test binaries failed (exit ${code}); the step is named above`));
    });
  });
}
