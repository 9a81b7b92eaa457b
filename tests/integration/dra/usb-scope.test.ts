/**
 * Two controllers with the USB reconcilers on, each in its own scope (WATCH_NAMESPACE and
 * CLUSTER_OBJECTS_SELECTOR as every controller test runs them), on one real apiserver: each fixture
 * node is labelled into one scope and its DRA daemon publishes its devices. Each controller makes and
 * reconciles the NodeUSBDevices of its own nodes only (they carry its scope label), the USBDevices and
 * templates of its own namespace only, and leaves a NodeUSBDevice of its scope assigned to the other
 * namespace alone. Each controller impersonates its own user, so the audit log tells who wrote what.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { usbDeviceName } from '../../../daemons/dra/devices.js';
import { writeFixtureSysfs, type FixtureDevice } from '../../../daemons/dra/discovery/index.js';
import { ResourceClaimTemplateSchema, resourceClaimTemplateDescriptor } from '../../../shared/api/k8s/resource.js';
import { NodeUSBDeviceSchema, USBDeviceSchema, nodeUSBDevice, usbDevice, type NodeUSBDevice, type USBDevice } from '../../../shared/api/resources/usb.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import { descriptorOf, KubeClient, type ResourceClient } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace, impersonatingKubeConfig, kubectl, newKubeConfig } from '../../env/index.js';
import { writesIn, writesTo, type AuditEvent } from '../controller/audit.js';
import { gone, newScope, SCOPE_LABEL, startTestController, type Scope, type TestController } from '../controller/fixtures.js';
import { fixtureNode, labelIntoScope, startDaemon, TEST_MANAGER, type FixtureNode, type RunningDaemon } from './harness.js';

const devA1: FixtureDevice = { busId: '6-1', devNum: 2, vendorId: '0529', productId: '0001', serial: 'SCOPE-A1' };
const devA2: FixtureDevice = { busId: '6-2', devNum: 3, vendorId: '0403', productId: '6001', serial: 'SCOPE-A2' };
const devB1: FixtureDevice = { busId: '7-1', devNum: 2, vendorId: '0529', productId: '0001', serial: 'SCOPE-B1' };

interface Side {
  scope: Scope;
  user: string;
  node: FixtureNode;
  daemon: RunningDaemon;
  kube: KubeClient;
  ctl: TestController;
}

let a: Side;
let b: Side;
let admin: KubeClient;

const nodeDevices = (): ResourceClient<NodeUSBDevice> => admin.resource(descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema, TEST_MANAGER);
const usbDevices = (): ResourceClient<USBDevice> => admin.resource(descriptorOf(usbDevice), USBDeviceSchema, TEST_MANAGER);
const condition = (obj: NodeUSBDevice | undefined, type: string): string | undefined => {
  const c = obj?.status?.conditions?.find((x) => x.type === type);
  return c === undefined ? undefined : `${c.status}/${c.reason}`;
};
const getNode = (name: string): Promise<NodeUSBDevice | undefined> =>
  nodeDevices()
    .get({ name })
    .catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
const by = (user: string) => (e: AuditEvent) => e.impersonatedUser?.username === user;

async function side(prefix: string, devices: FixtureDevice[]): Promise<Side> {
  const scope = newScope(await freshNamespace(prefix));
  const user = `${prefix}-controller-${scope.id}`;
  const bound = await kubectl(['create', 'clusterrolebinding', user, '--clusterrole=cluster-admin', `--user=${user}`]);
  if (bound.code !== 0) throw new Error(`clusterrolebinding ${user}: ${bound.stderr}`);
  const node = await fixtureNode(prefix);
  await writeFixtureSysfs(node.sysRoot, devices);
  await labelIntoScope(node, scope);
  const daemon = startDaemon(node);
  await daemon.handle.started;
  const kube = new KubeClient(impersonatingKubeConfig(user));
  const ctl = await startTestController(kube, scope, {}, { usb: true });
  return { scope, user, node, daemon, kube, ctl };
}

beforeAll(async () => {
  admin = new KubeClient(newKubeConfig());
  [a, b] = await Promise.all([side('usb-scope-a', [devA1, devA2]), side('usb-scope-b', [devB1])]);
});

afterAll(async () => {
  for (const s of [a, b]) {
    if (s === undefined) continue;
    await s.ctl.stop();
    await s.daemon.stop();
    await s.node.cleanup();
    s.kube.close();
    await kubectl(['delete', 'clusterrolebinding', s.user, '--ignore-not-found']);
  }
  admin?.close();
});

describe('the USB reconcilers of two controllers in different scopes', () => {
  it('make and reconcile the NodeUSBDevices of their own nodes only, labelled into their scope', async () => {
    for (const [s, dev] of [
      [a, devA1],
      [a, devA2],
      [b, devB1],
    ] as const) {
      const name = usbDeviceName(dev, s.node.name);
      const n = await waitFor(`${name} Ready`, async () => {
        const got = await getNode(name);
        return condition(got, 'Ready') === 'True/Ready' && condition(got, 'Assigned') === 'False/Available' && got;
      });
      expect(n.metadata.labels).toEqual({ [SCOPE_LABEL]: s.scope.id });
      const other = s === a ? b : a;
      const writers = await writesTo('nodeusbdevices', name);
      expect(writers.filter(by(s.user)).length).toBeGreaterThan(0);
      expect(writers.filter(by(other.user))).toEqual([]);
    }
  });

  it('make USBDevices and templates in their own namespace only', async () => {
    const nameA = usbDeviceName(devA1, a.node.name);
    const nameB = usbDeviceName(devB1, b.node.name);
    await nodeDevices().mergePatch({ name: nameA }, { spec: { assignedNamespace: a.scope.namespace } });
    await nodeDevices().mergePatch({ name: nameB }, { spec: { assignedNamespace: b.scope.namespace } });
    const templates = admin.resource(resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema, TEST_MANAGER);
    for (const [s, name] of [
      [a, nameA],
      [b, nameB],
    ] as const) {
      await waitFor(`${name} Assigned`, async () => condition(await getNode(name), 'Assigned') === 'True/Assigned');
      await waitFor(`${name}'s template`, () => templates.get({ namespace: s.scope.namespace, name: `${name}-template` }).catch(() => undefined));
      const device = await usbDevices().get({ namespace: s.scope.namespace, name });
      expect(device.metadata.finalizers).toEqual(['virtualization.deckhouse.io/usbdevice-cleanup']);
    }
    // Every write in a namespace is its own controller's (or the test's), never the other's.
    expect((await writesIn(a.scope.namespace)).filter(by(b.user))).toEqual([]);
    expect((await writesIn(b.scope.namespace)).filter(by(a.user))).toEqual([]);
    expect((await writesIn(a.scope.namespace)).filter(by(a.user)).length).toBeGreaterThan(0);
    expect((await writesIn(b.scope.namespace)).filter(by(b.user)).length).toBeGreaterThan(0);
  });

  it('leave a NodeUSBDevice of their scope that is assigned to another namespace alone', async () => {
    const cross = usbDeviceName(devA2, a.node.name);
    const before = await getNode(cross);
    const assigned = await nodeDevices().mergePatch({ name: cross }, { spec: { assignedNamespace: b.scope.namespace } });
    const since = assigned.metadata.resourceVersion;
    expect(since).toBeDefined();
    // A barrier: a change controller A must act on, made after the cross assignment (its informer
    // delivers both in order, and this one takes apiserver round trips).
    const nameA = usbDeviceName(devA1, a.node.name);
    await nodeDevices().mergePatch({ name: nameA }, { spec: { assignedNamespace: '' } });
    await waitFor('A removed its USBDevice after the unassignment', async () => {
      const removed = await gone(() => usbDevices().get({ namespace: a.scope.namespace, name: nameA }));
      return removed && condition(await getNode(nameA), 'Assigned') === 'False/Available';
    });
    // Nobody wrote the cross-assigned device after the assignment: its status is the one A wrote while unassigned.
    const after = await getNode(cross);
    expect(after?.metadata.resourceVersion).toBe(since);
    expect(after?.status).toEqual(before?.status);
    // No USBDevice in B's namespace for it, from either controller.
    expect(await gone(() => usbDevices().get({ namespace: b.scope.namespace, name: cross }))).toBe(true);
  });
});
