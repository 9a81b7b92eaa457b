import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
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

/** The KubeVirt version tests/env/build-kubevirt.sh builds by default. */
export const KUBEVIRT_VERSION = '1.6.0';
const KUBEVIRT_BINARIES = ['virt-controller', 'virt-api'] as const;

/**
 * Where the built KubeVirt binaries are, without building them: VIRT_TESTENV_KUBEVIRT_DIR or the
 * cache directory of build-kubevirt.sh. `missing` names the binaries not there (empty: all built).
 */
export function locateKubeVirtBinaries(env: NodeJS.ProcessEnv = process.env): { dir: string; missing: string[] } {
  const cache = env['VIRT_TESTENV_CACHE'] ?? join(env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'virt-testenv');
  const dir = env['VIRT_TESTENV_KUBEVIRT_DIR'] || join(cache, `kubevirt-${env['KUBEVIRT_VERSION'] ?? KUBEVIRT_VERSION}`);
  return { dir, missing: KUBEVIRT_BINARIES.filter((b) => !isExecutable(join(dir, b))) };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
