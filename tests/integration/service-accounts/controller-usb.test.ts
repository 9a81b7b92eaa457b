/**
 * The controller's USB reconcilers (daemons/controller/reconcilers/usb) under exactly the RBAC the
 * install gives the controller (knative/rbac/components/controller.yaml), through a client
 * impersonating its ServiceAccount: the DRA daemon (admin here) publishes a fixture node's device,
 * the reconcilers make its NodeUSBDevice, and a namespace assigned makes the USBDevice and its
 * ResourceClaimTemplate there, with no request of the ServiceAccount refused.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { usbDeviceName } from '../../../daemons/dra/devices.js';
import { writeFixtureSysfs } from '../../../daemons/dra/discovery/index.js';
import { ResourceClaimTemplateSchema, resourceClaimTemplateDescriptor } from '../../../shared/api/k8s/resource.js';
import { NodeUSBDeviceSchema, nodeUSBDevice } from '../../../shared/api/resources/usb.js';
import { descriptorOf, type KubeClient } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace } from '../../env/index.js';
import { fixtureNode, startUsbFlow, TEST_MANAGER, type FixtureNode, type UsbFlow } from '../dra/harness.js';
import { applyComponentRbac, describeRequest, loadComponentRbac, requestsMadeBy, serviceAccountClient, type ComponentRbac } from './component-rbac.js';

const device = { busId: '5-1', devNum: 3, vendorId: '0529', productId: '0001', serial: 'SA-1' };
let rbac: ComponentRbac;
let kube: KubeClient;
let node: FixtureNode;
let flow: UsbFlow;
const since = Date.now();

beforeAll(async () => {
  rbac = await loadComponentRbac('controller');
  await applyComponentRbac(rbac);
  kube = serviceAccountClient(rbac, { requestTimeoutMs: 10_000 });
  node = await fixtureNode('usb-sa');
  await writeFixtureSysfs(node.sysRoot, [device]);
  flow = await startUsbFlow(node, kube);
});

afterAll(async () => {
  await flow?.stop();
  await node?.cleanup();
});

describe("the controller's USB reconcilers as the controller ServiceAccount", () => {
  it('makes the NodeUSBDevice, the USBDevice and its ResourceClaimTemplate with no request refused', async () => {
    const name = usbDeviceName(device, node.name);
    const nodeDevices = node.kube.resource(descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema, TEST_MANAGER);
    await waitFor('the NodeUSBDevice', () => nodeDevices.get({ name }).catch(() => undefined));
    const ns = await freshNamespace('usb-sa');
    await nodeDevices.mergePatch({ name }, { spec: { assignedNamespace: ns } });
    const templates = node.kube.resource(resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema, TEST_MANAGER);
    const template = await waitFor('the claim template', () => templates.get({ namespace: ns, name: `${name}-template` }).catch(() => undefined));
    expect(template.metadata.ownerReferences?.[0]?.kind).toBe('USBDevice');

    const seen = await requestsMadeBy(kube, rbac, since);
    expect(seen.some((s) => 'resource' in s.request && s.request.resource === 'resourceslices')).toBe(true);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
  });
});
