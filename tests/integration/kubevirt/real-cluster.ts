/**
 * A cluster with real KubeVirt and nothing of ours running yet: upstream virt-api and virt-controller
 * behind our api-rewriter (real-kubevirt.ts), kube-controller-manager, kube-scheduler, kwok and `nodes`
 * kwok nodes, and the user's side seeded (seed.ts). The tests' system (system-rig.ts) adds our
 * controller and the node agent in-process; the scale benchmark (tests/bench/controller-scale.bench.ts)
 * adds them as processes. No jest here.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startKwokProcess } from '../../../platform/local-cluster.js';
import { startControllerManager, startScheduler } from '../../env/control-plane.js';
import { getTestEnv } from '../../env/index.js';
import type { LoggedProcess } from '../../env/process.js';
import { startRealKubeVirt, type RealKubeVirt } from './real-kubevirt.js';
import { seedUserSide, type Seeded } from './seed.js';

export interface RealCluster {
  readonly kv: RealKubeVirt;
  readonly seeded: Seeded;
  /** kube-controller-manager, kube-scheduler and kwok against KubeVirt's apiserver. */
  readonly processes: readonly LoggedProcess[];
  /** Its work directory (logs of the processes above). */
  readonly workDir: string;
  stop(): Promise<void>;
}

/** Start it all for `name`; `serviceAccountAdmission` as in startRealKubeVirt. A failure stops what was started. */
export async function startRealCluster(name: string, o: { nodes: number; serviceAccountAdmission?: boolean }): Promise<RealCluster> {
  const kv = await startRealKubeVirt(name, { serviceAccountAdmission: o.serviceAccountAdmission === true });
  const processes: LoggedProcess[] = [];
  let seeded: Seeded | undefined;
  const stop = async (): Promise<void> => {
    for (const p of processes.reverse()) await p.stop();
    seeded?.kube.close();
    await kv.stop();
  };
  try {
    const env = getTestEnv();
    const workDir = join(env.workDir, `${name}-${process.pid}`);
    await mkdir(workDir, { recursive: true });
    const kubeconfig = kv.apiserver.kubeconfigPath;
    // The node lifecycle controller lifts the not-ready taint the apiserver puts on new nodes; the garbage collector follows owners.
    const kcm = { binDir: env.binDir, workDir, kubeconfig, saKey: join(env.workDir, 'pki', 'sa.key'), rootCa: env.servingCaPath };
    processes.push(await startControllerManager(kcm));
    processes.push(await startScheduler({ binDir: env.binDir, workDir, kubeconfig }));
    processes.push(await startKwokProcess({ binDir: env.binDir, workDir, kubeconfig }));
    seeded = await seedUserSide(kv, name, o.nodes);
    return { kv, seeded, processes, workDir, stop };
  } catch (err: unknown) {
    await stop();
    throw err;
  }
}
