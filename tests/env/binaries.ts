import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./build-binaries.sh', import.meta.url));
export const KUBEVIRT_SCRIPT = fileURLToPath(new URL('./build-kubevirt.sh', import.meta.url));

/** Runs a build script that prints its cache directory as the last line of stdout. */
function runBuildScript(script: string, what: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('error', (err) => reject(new Error(`could not run ${script}: ${err.message}`, { cause: err })));
    // 'close', not 'exit': the process may exit before its stdout has been read to the end (seen on a busy machine).
    child.on('close', (code) => {
      const dir = out.trim().split('\n').pop() ?? '';
      if (code === 0 && dir !== '') resolve(dir);
      else reject(new Error(`building ${what} failed (exit ${code}); the step is named above`));
    });
  });
}

/**
 * Ensure kube-apiserver, kubectl and etcd are built (cached outside the repo, keyed by version) and
 * return their directory. Progress of a cold build goes to stderr; a failure names the step.
 */
export function ensureBinaries(): Promise<string> {
  if (process.env['VIRT_TESTENV_BIN_DIR']) return Promise.resolve(process.env['VIRT_TESTENV_BIN_DIR']);
  return runBuildScript(SCRIPT, 'the test binaries');
}

/**
 * Ensure upstream KubeVirt's virt-controller and virt-api and our CRD dumper `kubevirt-crds` are built
 * (cached beside the Kubernetes binaries, keyed by KubeVirt version) and return their directory.
 */
export function ensureKubeVirtBinaries(): Promise<string> {
  if (process.env['VIRT_TESTENV_KUBEVIRT_DIR']) return Promise.resolve(process.env['VIRT_TESTENV_KUBEVIRT_DIR']);
  return runBuildScript(KUBEVIRT_SCRIPT, 'the KubeVirt binaries');
}

export const SKAFFOLD_SCRIPT = fileURLToPath(new URL('./build-skaffold.sh', import.meta.url));

/** Ensure skaffold v2 is built (cached beside the other binaries, keyed by version) and return its directory. */
export function ensureSkaffold(): Promise<string> {
  if (process.env['VIRT_TESTENV_SKAFFOLD_DIR']) return Promise.resolve(process.env['VIRT_TESTENV_SKAFFOLD_DIR']);
  return runBuildScript(SKAFFOLD_SCRIPT, 'skaffold');
}

/**
 * Ensure the Knative platform skaffold.yaml installs is assembled from the Go modules of the pinned
 * release (tests/env/knative-version) into the untracked .knative-platform/, and return that directory.
 */
export function ensureKnativePlatform(): Promise<string> {
  return runBuildScript(fileURLToPath(new URL('./knative-platform.sh', import.meta.url)), 'the Knative platform manifests');
}
