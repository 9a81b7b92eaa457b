/**
 * `npm run cluster`: the same control plane as the test suite, standalone, with the CRDs installed.
 * Prints the KUBECONFIG path and stays up until Ctrl-C (SIGINT) or SIGTERM.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBinaries } from './binaries.js';
import { startControlPlane } from './control-plane.js';
import { installCrds } from './crds.js';
import { rootLogger } from '../../shared/log/index.js';

const log = rootLogger.child({ component: 'cluster' });

async function main(): Promise<void> {
  const binDir = await ensureBinaries();
  const workDir = await mkdtemp(join(tmpdir(), 'virt-cluster-'));
  log.info({ workDir }, 'starting etcd and kube-apiserver');
  const cp = await startControlPlane(binDir, workDir);
  await installCrds(cp.state);
  process.stdout.write(
    `\nControl plane is up at ${cp.state.server}\n` +
      `  export KUBECONFIG=${cp.state.kubeconfigPath}\n` +
      `  export PATH=${binDir}:$PATH   # version-matched kubectl\n` +
      `  audit log: ${cp.state.auditLogPath}\n` +
      `Press Ctrl-C to stop.\n`,
  );
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping the control plane');
    cp.stop()
      .then(() => rm(workDir, { recursive: true, force: true }))
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, 'stopping failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  log.fatal({ err }, 'the control plane did not start');
  process.exit(1);
});
