/** --kubeconfig: our units against a cluster that has the install. */
import { existsSync } from 'node:fs';
import { KubeClient } from '../shared/kube/index.js';
import { MODULE_NAMESPACE } from './identities.js';
import { kubectlFor } from './install.js';
import { UNIT_ENTRIES, type Parts, type RunningPlatform } from './parts.js';
import { startUnits } from './start-units.js';
import { bundleUnits } from './units.js';

/** --kubeconfig: our units against a cluster that has the install; nothing of the cluster is changed. */
export async function startAgainst(p: Parts, kubeconfigPath: string): Promise<RunningPlatform> {
  const { binDir, say } = p.o;
  if (!existsSync(kubeconfigPath)) throw new Error(`--kubeconfig ${kubeconfigPath}: no such file`);
  const admin = (p.admin = KubeClient.fromSource({ kubeconfigPath }));
  const kubectl = kubectlFor(binDir, kubeconfigPath);
  const server = admin.kubeConfig.getCurrentCluster()?.server ?? '?';
  say(`using the cluster at ${server} (${kubeconfigPath}): no local control plane, nodes or simulator`);
  const missing = await kubectl(['-n', MODULE_NAMESPACE, 'get', 'serviceaccount', 'controller', 'admission', 'audit', '-o', 'name']).then(
    () => undefined,
    (err: unknown) => String(err),
  );
  const crd = await kubectl(['get', 'crd', 'virtualmachines.virtualization.deckhouse.io', '-o', 'name']).then(
    () => undefined,
    (err: unknown) => String(err),
  );
  if (missing !== undefined || crd !== undefined) {
    throw new Error(
      `the install is not applied to that cluster (namespace ${MODULE_NAMESPACE}, its ServiceAccounts and the CRDs are needed): apply it first with \`kubectl apply -k knative/\`\n${missing ?? crd ?? ''}`,
    );
  }
  p.bundles = await bundleUnits(UNIT_ENTRIES);
  const { units, ports } = await startUnits(p, { admin, simulator: false });
  say(
    `  the cluster's apiserver keeps calling its own webhooks and audit sink; the local admission (https://127.0.0.1:${ports.admission}) and audit (http://127.0.0.1:${ports.audit}) serve for you to call`,
  );
  return {
    local: false,
    server,
    adminKubeconfig: kubeconfigPath,
    admin,
    kubectl,
    userKubectl: (name) => Promise.resolve(kubectlFor(binDir, kubeconfigPath, [`--as=${name}`])),
    auditLog: units['audit']?.logPath ?? '',
    units,
  };
}
