/**
 * virtualization-dra (daemons/dra/daemon.ts: the ResourceSlice publisher and the kubelet plugin's
 * claim lookups, as the DaemonSet runs it) under exactly the RBAC the install gives it
 * (knative/daemons/dra/rbac.yaml), through a client impersonating its ServiceAccount. sysfs is a
 * fixture tree and kubelet is a gRPC client in the test. The slices are published and updated, a claim prepared
 * from the daemon's claim cache and unprepared, its device imported over USB/IP by the node of the claim's pod, a missing claim looked up by GET, and the slices removed at
 * shutdown with no request refused; removing any one rule
 * makes one of them denied, and the role grants nothing unused.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { usbDeviceName } from '../../../daemons/dra/devices.js';
import { writeFixtureSysfs } from '../../../daemons/dra/discovery/index.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace, kubectl, newKubeConfig } from '../../env/index.js';
import { devicesOf, fixtureNode, gatewayEnv, slicesOf, startDaemon, type FixtureNode } from '../dra/harness.js';
import { allocatedClaim, DraClient, reserveForPodOn } from '../dra/kubelet-client.js';
import { importRemote } from '../../../daemons/dra/usbip/client.js';
import { KNATIVE_DIR, readManifests } from '../install/manifests.js';
import {
  applyComponentRbac,
  itNeedsEveryRuleAndNothingMore,
  describeRequest,
  isResourceRequest,
  requestsMadeBy,
  serviceAccountClient,
  type ApiRequest,
  type ComponentRbac,
  itActsAsItsServiceAccount,
} from './component-rbac.js';

const admin = new KubeClient(newKubeConfig());

async function nodeLabels(name: string): Promise<Record<string, string>> {
  const res = await kubectl(['get', 'node', name, '-o', 'json']);
  if (res.code !== 0) throw new Error(`kubectl get node ${name}: ${res.stderr}`);
  return (JSON.parse(res.stdout) as { metadata: { labels?: Record<string, string> } }).metadata.labels ?? {};
}
let rbac: ComponentRbac;
let kube: KubeClient;
let node: FixtureNode;
let requests: ApiRequest[] = [];

/** The DRA objects of the install as a ComponentRbac (they live beside its DaemonSet). */
async function loadDraRbac(): Promise<ComponentRbac> {
  const objects = await readManifests(`${KNATIVE_DIR}daemons/dra/rbac.yaml`);
  const sa = objects.find((m) => m.kind === 'ServiceAccount')?.metadata;
  if (sa?.namespace === undefined) throw new Error('rbac.yaml must hold a namespaced ServiceAccount');
  const groups = ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'];
  return {
    component: 'dra',
    objects,
    serviceAccount: { name: sa.name, namespace: sa.namespace },
    user: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    groups,
  };
}

beforeAll(async () => {
  rbac = await loadDraRbac();
  await applyComponentRbac(rbac);
  kube = serviceAccountClient(rbac, { requestTimeoutMs: 10_000 });
  node = await fixtureNode('dra-sa');
  await writeFixtureSysfs(node.sysRoot, [{ busId: '1-1', devNum: 2, vendorId: '0529', productId: '0001', serial: 'S1' }]);
});

afterAll(async () => {
  kube.close();
  admin.close();
  await node.cleanup();
});

describe('virtualization-dra with only its ServiceAccount rights', () => {
  itActsAsItsServiceAccount('dra', () => ({ kube, rbac }));

  it('publishes, prepares and unprepares a claim, removes its slices, refused nothing', async () => {
    const since = Date.now();
    const ns = await freshNamespace('dra-sa');
    const deviceName = usbDeviceName({ busId: '1-1', vendorId: '0529', productId: '0001' }, node.name);
    // The USB/IP gateway on (kernel side simulated, no secret), so the Node marks are written too.
    const daemon = startDaemon(node, gatewayEnv(node), serviceAccountClient(rbac));
    try {
      await daemon.handle.started;
      await waitFor('the slice', async () => devicesOf(await slicesOf(admin, node.name)).has(deviceName));
      await waitFor('the node marks of the USB/IP gateway', async () => (await nodeLabels(node.name))['virtualization.deckhouse.io/usb-gateway'] === 'true');
      // A second device plugged: the stored slice is applied again.
      await writeFixtureSysfs(node.sysRoot, [{ busId: '1-2', devNum: 3, vendorId: '0403', productId: '6001' }]);
      await waitFor('the slice with both devices', async () => devicesOf(await slicesOf(admin, node.name)).size === 2);
      const claim = await allocatedClaim(admin, ns, 'c1', node.name, deviceName);
      // Read from the daemon's informer cache (list and watch) once it has it...
      await waitFor('the claim in the daemon cache', () => daemon.handle.claims.holds(claim));
      const client = new DraClient(daemon.handle.plugin()?.draSocket ?? '', 'v1');
      try {
        expect((await client.prepare([claim])).claims[claim.uid]?.error).toBe('');
        expect((await client.unprepare([claim])).claims[claim.uid]?.error).toBe('');
        // An import asked of this node's gateway: allowed for the node of the claim's pod (claims listed,
        // the pod and the node read by GET).
        await reserveForPodOn(admin, claim, node.name);
        const port = daemon.handle.usbip()?.server.port ?? 0;
        const imported = await importRemote({ host: '127.0.0.1', port, busId: '1-1' });
        imported.socket.destroy();
        expect(imported.device.busId).toBe('1-1');
        // ...and by GET when it does not (here: a claim that does not exist, answered 404).
        const missing = { namespace: ns, name: 'never-made', uid: 'd6b0c3a4-0000-4000-8000-000000000000' };
        expect((await client.prepare([missing])).claims[missing.uid]?.error).toBe(`ResourceClaim ${ns}/never-made not found`);
        // A device of another pool: the gateway lists the driver's slices of every pool and GETs that node (absent here).
        const remote = await allocatedClaim(admin, ns, 'c2', 'dra-sa-other-node', 'usb-elsewhere');
        expect((await client.prepare([remote])).claims[remote.uid]?.error).toBe(
          'USB/IP import refused or failed: device usb-elsewhere is not published in pool dra-sa-other-node (unplugged, or its node is gone)',
        );
      } finally {
        client.close();
      }
    } finally {
      await daemon.stop();
    }
    expect(await slicesOf(admin, node.name)).toEqual([]);
    const seen = await waitFor('the shutdown delete in the audit log', async () => {
      const now = await requestsMadeBy(kube, rbac, since);
      return now.some((s) => s.request.verb === 'delete') ? now : undefined;
    });
    requests = seen.map((s) => s.request);
    const resources = [...new Set(requests.filter(isResourceRequest).map((r) => `${r.verb} ${r.resource}`))].sort();
    expect(resources).toEqual([
      'create resourceslices',
      'delete resourceslices',
      'get nodes',
      'get pods',
      'get resourceclaims',
      'list resourceclaims',
      'list resourceslices',
      'patch nodes',
      'patch resourceclaims',
      'patch resourceslices',
      'watch resourceclaims',
    ]);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
  });

  itNeedsEveryRuleAndNothingMore('it does', () => ({ admin, rbac, requests }));
});
