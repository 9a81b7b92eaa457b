/**
 * Upstream KubeVirt's virt-api and virt-controller for a test: an apiserver of their own (same etcd,
 * own prefix: no other test's internal VMs reach them) with the install's CRDs, our api-rewriter in
 * front of it (with the webhook proxy), and KubeVirt set up the one way `npm start` sets it up
 * (platform/kubevirt.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyKubeVirtConfiguration, planKubeVirt, rewriterWebhookEnv, startKubeVirt, type KubeVirtPlan } from '../../../platform/kubevirt.js';
import { INTERNAL, KUBEVIRT_NAMESPACE } from '../../../platform/kubevirt.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { ensureKubeVirtBinaries } from '../../env/binaries.js';
import { getTestEnv, kubectl, startExtraApiServer, type ExtraApiServer, type KubectlResult } from '../../env/index.js';
import type { LoggedProcess } from '../../env/process.js';
import { spawnRewriter, type RewriterProcess } from '../api-rewriter/process.js';
import { installCrds } from '../install/knative-crds.js';
import { KNATIVE_DIR } from '../install/manifests.js';

export { INTERNAL, KUBEVIRT_NAMESPACE, kubeVirtConfig } from '../../../platform/kubevirt.js';

export interface RealKubeVirt {
  readonly apiserver: ExtraApiServer;
  readonly rewriter: RewriterProcess;
  readonly virtApi: LoggedProcess;
  readonly virtController: LoggedProcess;
  /** Its certificates and ports (virt-api's serving CA and port). */
  readonly plan: KubeVirtPlan;
  /** kubectl against the apiserver directly (internal names). */
  kubectl(args: string[], stdin?: string): Promise<KubectlResult>;
  /** The same, failing with kubectl's stderr on a non-zero exit. */
  ok(args: string[], stdin?: string): Promise<string>;
  /** virt-controller's log so far. */
  controllerLog(): string;
  stop(): Promise<void>;
}

/** Edits KubeVirt's configuration by hand to drop the bpfbridge binding, and waits until virt-controller has read that version. */
export async function dropBpfBridgeBinding(kv: RealKubeVirt, timeoutMs: number): Promise<void> {
  const config = [`internalvirtualizationkubevirts.${INTERNAL}`, 'config', '-n', KUBEVIRT_NAMESPACE];
  await kv.ok(['patch', ...config, '--type=json', '-p', JSON.stringify([{ op: 'remove', path: '/spec/configuration/network/binding/bpfbridge' }])]);
  const rv = (JSON.parse(await kv.ok(['get', ...config, '-o', 'json'])) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  await waitFor('virt-controller to read the new configuration', () => kv.controllerLog().includes(`resource version '${rv}'`), { timeoutMs });
}

/**
 * `serviceAccountAdmission`: pods get their token volume as in a cluster (a kube-controller-manager must
 * make each namespace's `default` ServiceAccount). virt-controller counts on it: an attachment pod
 * matches its hot-plugged volumes only with its emptyDir and token volume besides them.
 */
export async function startRealKubeVirt(name: string, o: { serviceAccountAdmission?: boolean } = {}): Promise<RealKubeVirt> {
  const binDir = await ensureKubeVirtBinaries();
  const dir = join(getTestEnv().workDir, `${name}-${randomBytes(3).toString('hex')}`);
  const apiserver = await startExtraApiServer({
    extraArgs: [`--etcd-prefix=/${name}-${randomBytes(4).toString('hex')}`],
    serviceAccountAdmission: o.serviceAccountAdmission === true,
  });
  const kc = (args: string[], stdin?: string): Promise<KubectlResult> =>
    kubectl(args, { kubeconfigPath: apiserver.kubeconfigPath, ...(stdin === undefined ? {} : { stdin }) });
  const ok = async (args: string[], stdin?: string): Promise<string> => {
    const res = await kc(args, stdin);
    if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${res.stderr}`);
    return res.stdout;
  };
  const started: { stop(): Promise<unknown> }[] = [apiserver];
  const stop = async (): Promise<void> => {
    for (const p of started.reverse()) await p.stop();
  };
  try {
    await installCrds(`${KNATIVE_DIR}crds`, { kubeconfigPath: apiserver.kubeconfigPath });
    const plan = await planKubeVirt(dir);
    const rewriter = await spawnRewriter({ kubeconfigPath: apiserver.kubeconfigPath, name, env: rewriterWebhookEnv(plan) });
    started.push(rewriter);
    await applyKubeVirtConfiguration(ok, plan);
    const { virtApi, virtController } = await startKubeVirt(plan, {
      binDir,
      kubectl: ok,
      rewriterKubeconfig: rewriter.kubeconfigPath,
      logDir: dir,
      started: (p) => started.push(p),
    });
    const controllerLog = (): string => readFileSync(virtController.logPath, 'utf8');
    return { apiserver, rewriter, virtApi, virtController, plan, kubectl: kc, ok, controllerLog, stop };
  } catch (err: unknown) {
    await stop();
    throw err;
  }
}
