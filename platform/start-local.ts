/** The local platform: control plane, kwok nodes, the install, DVCR, our units and the simulators, the ModuleConfig. */
import { join } from 'node:path';
import { KubeClient } from '../shared/kube/index.js';
import { waitFor } from '../shared/testing/wait.js';
import { SNAPSHOT_CRD_DIR } from '../tests/env/crds.js';
import { freePort } from '../tests/env/ports.js';
import { moduleConfig } from './demo/objects.js';
import { dvcrDeployment, DVCR_DEPLOYMENT, startDvcr } from './dvcr.js';
import { ModuleConfigTriggers, TRIGGER_NAMES, triggerIdentity } from './eventing.js';
import { MODULE_NAMESPACE } from './identities.js';
import { applyCrds, applyInstall, kubectlFor, type Kubectl } from './install.js';
import { createNodes, startKwok, startLocalCluster } from './local-cluster.js';
import { ADMISSION_SERVICE, UNIT_ENTRIES, type Parts, type RunningPlatform } from './parts.js';
import { LocalRouteForge } from './route-forge.js';
import { HELPER_POD_SELECTOR } from './simulators/storage-simulator/config.js';
import { SIMULATED_CLASS_NAMES, SIMULATED_STORAGE_CLASSES, SIMULATED_STORAGE_CLASS } from './simulators/storage-simulator/classes.js';
import { prepareSimulatedUsbNode } from './simulators/usb-node.js';
import { describeMode, KUBEVIRT_RBAC, kubeVirtMode } from './start-kubevirt.js';
import { preDeleteOnDemand, startUnits } from './start-units.js';
import { bundleUnits, REPO_ROOT } from './units.js';
import { WebhookRoute } from './webhook-wiring.js';

/** The simulator's ServiceAccount and RBAC (not part of the install). */
const SIMULATOR_RBAC = join(REPO_ROOT, 'platform/simulators/kubevirt-simulator/rbac.yaml');
/** The storage simulator's ServiceAccount and RBAC (not part of the install either). */
const STORAGE_SIMULATOR_RBAC = join(REPO_ROOT, 'platform/simulators/storage-simulator/rbac.yaml');

/** snapshot.storage.k8s.io/v1, which the snapshot kinds need (no CSI snapshot controller runs here: the controller sees the kinds served). */
async function applySnapshotCrds(kubectl: Kubectl): Promise<void> {
  const names = await kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', '-f', SNAPSHOT_CRD_DIR, '-o', 'name']);
  await kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    ...names
      .trim()
      .split('\n')
      .filter((n) => n !== ''),
  ]);
}

export async function startLocal(p: Parts): Promise<RunningPlatform> {
  const { binDir, workDir, flags, say } = p.o;
  // The audit function's port goes into the apiserver's flags, so it is chosen now; every other unit
  // binds port 0 and the platform reads the port from its log.
  const auditPort = await freePort();
  const t = Date.now();
  say('starting the control plane: etcd, kube-apiserver (audit webhook → our audit function), kube-controller-manager, kube-scheduler');
  const cluster = await startLocalCluster({ binDir, workDir, supervisor: p.supervisor, auditPort });
  const state = cluster.state;
  say(`control plane up in ${((Date.now() - t) / 1000).toFixed(1)} s at ${state.server}`);
  say(`  export KUBECONFIG=${state.kubeconfigPath}`);
  const admin = (p.admin = KubeClient.fromSource({ kubeconfigPath: state.kubeconfigPath }));
  const kubectl = kubectlFor(binDir, state.kubeconfigPath);
  const kubevirt = kubeVirtMode();
  p.kubevirtMode = describeMode(kubevirt);
  say(p.kubevirtMode);

  say(`starting kwok (simulated kubelets) with ${flags.nodes} node(s) and DVCR (docker-registry); applying the install (knative/); bundling our units`);
  const took = async <T>(work: Promise<T>): Promise<[T, string]> => {
    const at = Date.now();
    const value = await work;
    return [value, `${((Date.now() - at) / 1000).toFixed(1)} s`];
  };
  // The CRDs first within the install: the rest reads discovery once they are served, so no object of ours is raced.
  const crdsServed = applyCrds(kubectl);
  crdsServed.catch(() => undefined);
  const [[nodes, kwokTime], [report, installTime], [bundles], [dvcr, dvcrTime]] = await Promise.all([
    // The importer pods are the storage simulator's to run, not kwok's.
    took(startKwok(cluster, { binDir, workDir, supervisor: p.supervisor, unmanagedPodLabel: HELPER_POD_SELECTOR }).then(() => createNodes(admin, flags.nodes))),
    took(
      Promise.all([
        crdsServed.then(() => applySnapshotCrds(kubectl)),
        applyInstall(kubectl, admin, { crdsServed, kubeVirtConfiguration: kubevirt.real ? 'elsewhere' : 'install' }).then(async (r) => {
          const rbac = [SIMULATOR_RBAC, STORAGE_SIMULATOR_RBAC, ...(kubevirt.real ? [KUBEVIRT_RBAC] : [])].flatMap((f) => ['-f', f]);
          await kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', ...rbac]);
          await kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', '-f', '-'], auditWebhookBinding(cluster.auditWebhook.user));
          await kubectl(
            ['apply', '--server-side', '--field-manager=virtualization-platform', '-f', '-'],
            JSON.stringify({ apiVersion: 'v1', kind: 'List', items: SIMULATED_STORAGE_CLASSES }),
          );
          return r;
        }),
      ]).then(([, r]) => r),
    ),
    took(bundleUnits(UNIT_ENTRIES)),
    took(startDvcr(p)),
  ]);
  p.bundles = bundles;
  say(
    `  DVCR: docker-registry at ${dvcr.url} (${dvcrTime}), storage in ${join(workDir, 'dvcr')}; StorageClasses ${SIMULATED_CLASS_NAMES.join(', ')} (${SIMULATED_STORAGE_CLASS} the default); VolumeSnapshot CRDs`,
  );
  say(`  nodes: ${nodes.join(', ')} (${kwokTime}); install: ${report.applied} objects applied (${installTime})`);
  for (const s of report.skipped) say(`  not applied: ${s.count} × ${s.what} (${s.why})`);
  // Where DVCR garbage collection reports: the Deployment dvcr (the registry itself is the process above).
  await kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', '-f', '-'], JSON.stringify(dvcrDeployment(dvcr)));
  say(
    `  DVCR garbage collection: ${flags.dvcrGcSchedule === undefined ? 'off (--dvcr-gc-schedule off)' : `schedule "${flags.dvcrGcSchedule}" (UTC, the ModuleConfig's dvcr.gc)`}; its result: kubectl -n ${MODULE_NAMESPACE} get deployment ${DVCR_DEPLOYMENT} -o yaml (condition GarbageCollection)`,
  );
  p.routeForge = new LocalRouteForge(admin, kubectl, say, workDir);
  const routeForgeEnv = await p.routeForge.prepare(nodes);
  // virtualization-dra on the first node, over a SIMULATED sysfs tree (kwok nodes have no USB).
  const draEnv = nodes[0] === undefined ? undefined : await prepareSimulatedUsbNode(join(workDir, 'dra'), nodes[0]);
  const { units } = await startUnits(p, {
    admin,
    cluster,
    auditPort,
    simulator: true,
    kubevirt: { mode: kubevirt, kubectl },
    dvcr,
    routeForgeEnv,
    draEnv,
    onAdmissionPort: async (admissionPort) => {
      const route = new WebhookRoute(admin, { namespace: MODULE_NAMESPACE, name: ADMISSION_SERVICE, port: admissionPort }, (m) => say(`warning: ${m}`));
      p.route = route;
      const rerouted = await route.start();
      say(
        `  webhooks: Service ${MODULE_NAMESPACE}/${ADMISSION_SERVICE} → 127.0.0.1:${admissionPort} (ExternalName) for ${rerouted} webhook(s); caBundle from the controller's CA`,
      );
    },
  });
  p.sourceKube = KubeClient.fromSource({ kubeconfigPath: await p.tokens?.kubeconfigFor('moduleconfig-source') });
  // The Triggers' sender identities, which Knative's OIDC feature would create.
  await kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', '-f', '-'], triggerIdentities());
  const tokens = p.tokens;
  p.triggers = new ModuleConfigTriggers(p.sourceKube, preDeleteOnDemand(p, units), say, (sa) =>
    tokens === undefined ? Promise.reject(new Error('no ServiceAccount tokens')) : tokens.token(sa),
  );
  await p.triggers.start();
  say('  pre-delete: started on demand, by the first update or deletion of a ModuleConfig (as its Knative Triggers would)');
  say('applying ModuleConfig virtualization (validated by our admission webhook)');
  await waitFor(
    'the ModuleConfig accepted through the admission webhook',
    async () => {
      await kubectl(['apply', '-f', '-'], JSON.stringify(moduleConfig(flags.vmCidr, flags.dvcrGcSchedule)));
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  return {
    local: true,
    server: state.server,
    adminKubeconfig: state.kubeconfigPath,
    admin,
    kubectl,
    userKubectl: async (name) => kubectlFor(binDir, await cluster.userKubeconfig(name)),
    auditLog: units['audit']?.logPath ?? '',
    kubevirt: p.kubevirtMode,
    units: { dvcr: dvcr.process, ...units },
  };
}

/** The binding of the apiserver's audit webhook user (a static token, local-cluster.ts) to the install's audit-sender role. */
function auditWebhookBinding(user: string): string {
  return JSON.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'virtualization-platform:audit-webhook' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'd8:virtualization:audit-sender' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
}

/** The ServiceAccounts the Triggers deliver as (the install binds them to the pre-delete-sender role). */
function triggerIdentities(): string {
  const accounts = Object.values(TRIGGER_NAMES).map((trigger) => ({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: triggerIdentity(trigger), namespace: MODULE_NAMESPACE },
  }));
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: accounts });
}
