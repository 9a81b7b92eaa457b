/**
 * The test-side view of the real control plane started by jest's globalSetup (one per run). Tests use
 * a fresh namespace each; tests that must kill an apiserver start an extra one sharing the same etcd.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startApiServer, writeAdminKubeconfig, type ControlPlaneState } from './control-plane.js';
import { installDeckhouseCrds as installDeckhouseCrdsInto } from './crds.js';
import { runKubectl, type KubectlOptions, type KubectlResult } from './kubectl.js';
import { readState, registerExtra, unregisterExtra } from './state.js';

export type { ControlPlaneState } from './control-plane.js';
export type { KubectlOptions, KubectlResult } from './kubectl.js';
export { createCA, issueCert } from './certs.js';
export { freePort } from './ports.js';
export { readAuditLog } from './audit-log.js';

/** The running control plane: server URL, kubeconfig, CA paths, audit log, binaries. */
export function getTestEnv(): ControlPlaneState {
  return readState();
}

/** A KubeConfig for the admin user (system:masters) of the test control plane. */
export function newKubeConfig(kubeconfigPath: string = readState().kubeconfigPath): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return kc;
}

/** The admin kubeconfig (of the run's apiserver, or of `kubeconfigPath`), impersonating `user` on every request. */
export function impersonatingKubeConfig(user: string, kubeconfigPath?: string): KubeConfig {
  const admin = newKubeConfig(kubeconfigPath);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: admin.clusters,
    users: admin.users.map((u) => ({ ...u, impersonateUser: user })),
    contexts: admin.contexts,
    currentContext: admin.currentContext,
  });
  return kc;
}

/** kubectl (version-matched, built with the apiserver) as admin, or impersonating `asUser`. */
export function kubectl(args: string[], opts?: KubectlOptions): Promise<KubectlResult> {
  return runKubectl(readState(), args, opts);
}

/** Install Deckhouse's Module and ModuleConfig CRDs (knative/standalone) into the run's control plane,
 *  or into the apiserver of `kubeconfigPath` (an extra apiserver). Idempotent. */
export function installDeckhouseCrds(kubeconfigPath?: string): Promise<void> {
  return installDeckhouseCrdsInto(readState(), kubeconfigPath);
}

/** Create a namespace with a unique name. Tests leave it in place (kube-controller-manager would
 *  delete it and its content for real, but that only adds load to the run); names never repeat. */
export async function freshNamespace(prefix = 'test'): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`.slice(0, 63);
  await newKubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
  return name;
}

/** A second kube-apiserver process sharing the run's etcd, that a test may kill and restart. */
export interface ExtraApiServer {
  readonly server: string;
  readonly kubeconfigPath: string;
  kubeConfig(): KubeConfig;
  /** Its process id now (a restart changes it). */
  pid(): number;
  /** SIGKILL the process (connections drop mid-watch). */
  kill(): Promise<void>;
  /** Start it again on the same port; resolves once /readyz answers. */
  restart(): Promise<void>;
  /** Stop it for good. */
  stop(): Promise<void>;
}

/** An apiserver of its own on the shared etcd; `serviceAccountAdmission` turns the ServiceAccount admission plugin back on (every pod gets its token volume, as in a cluster). */
export async function startExtraApiServer(opts: { extraArgs?: string[]; serviceAccountAdmission?: boolean } = {}): Promise<ExtraApiServer> {
  const shared = readState();
  const state =
    opts.serviceAccountAdmission === true
      ? { ...shared, apiServerBaseArgs: shared.apiServerBaseArgs.filter((a) => a !== '--disable-admission-plugins=ServiceAccount') }
      : shared;
  const name = `extra-apiserver-${randomBytes(3).toString('hex')}`;
  const first = await startApiServer(state, { name, extraArgs: opts.extraArgs ?? [] });
  let proc = first.process;
  await registerExtra(state.workDir, name, proc.pid);
  const kubeconfigPath = join(state.workDir, `${name}.kubeconfig`);
  await writeAdminKubeconfig(state, first.server, kubeconfigPath);
  const kill = async (): Promise<void> => {
    await proc.kill();
    await unregisterExtra(state.workDir, name, proc.pid);
  };
  return {
    server: first.server,
    kubeconfigPath,
    kubeConfig: () => newKubeConfig(kubeconfigPath),
    pid: () => proc.pid,
    kill,
    async restart(): Promise<void> {
      if (!proc.hasExited()) await kill();
      proc = (await startApiServer(state, { name, port: first.port, extraArgs: opts.extraArgs ?? [] })).process;
      await registerExtra(state.workDir, name, proc.pid);
    },
    async stop(): Promise<void> {
      await proc.stop();
      await unregisterExtra(state.workDir, name, proc.pid);
    },
  };
}
