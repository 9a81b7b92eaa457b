/**
 * The controller's USB side (daemons/controller/reconcilers/usb and the VM's spec.usbDevices) under
 * exactly the RBAC the install gives the controller (knative/rbac/components/controller.yaml), the
 * controller running in-process on a client impersonating its ServiceAccount: the DRA daemon (admin
 * here) publishes a fixture node's device, the reconcilers make its NodeUSBDevice, a namespace
 * assigned makes the USBDevice and its ResourceClaimTemplate there, and a running VM naming it gets
 * the claim that reserves it and an addresourceclaim through the controller's real subresource client
 * (the aggregated API is not served here, so that call is answered 404, after authorization). Removing
 * the entry releases the claim. No request of the ServiceAccount is refused.
 */
import { describe, expect, it } from '@jest/globals';
import { usbDeviceName } from '../../../daemons/dra/devices.js';
import { writeFixtureSysfs } from '../../../daemons/dra/discovery/index.js';
import {
  ResourceClaimSchema,
  ResourceClaimTemplateSchema,
  resourceClaimDescriptor,
  resourceClaimTemplateDescriptor,
} from '../../../shared/api/k8s/resource.js';
import { NodeUSBDeviceSchema, nodeUSBDevice } from '../../../shared/api/resources/usb.js';
import { USBIP_HS_USED_ANNOTATION, USBIP_SS_USED_ANNOTATION, USBIP_TOTAL_PORTS_ANNOTATION } from '../../../shared/api/usbip.js';
import { descriptorOf } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { vm } from '../controller/builders.js';
import { gone, useCluster } from '../controller/fixtures.js';
import { startStoryWorld } from '../controller/story-world.js';
import { fixtureNode, labelIntoScope, startDaemon, TEST_MANAGER } from '../dra/harness.js';
import { applyComponentRbac, deniedRequests, describeRequest, loadComponentRbac, requestsMadeBy, serviceAccountClient } from './component-rbac.js';

const device = { busId: '5-1', devNum: 3, vendorId: '0529', productId: '0001', serial: 'SA-1' };
const t = useCluster();

describe("the controller's USB side as the controller ServiceAccount", () => {
  it('makes the NodeUSBDevice, USBDevice, template and a VM claim, and calls addresourceclaim, with no request refused', async () => {
    const since = Date.now();
    const rbac = await loadComponentRbac('controller');
    await applyComponentRbac(rbac);
    const kube = serviceAccountClient(rbac, { requestTimeoutMs: 10_000 });
    t.onCleanup(() => Promise.resolve(kube.close()));
    const node = await fixtureNode('usb-sa');
    t.onCleanup(() => node.cleanup());
    await writeFixtureSysfs(node.sysRoot, [device]);
    const daemon = startDaemon(node);
    t.onCleanup(() => daemon.stop());
    await daemon.handle.started;
    const { scope, ns, nodeName, className, kubevirt } = await startStoryWorld(t, {
      prefix: 'usb-sa',
      controllerKube: kube,
      env: {},
      controller: { usb: true },
    });
    await labelIntoScope(node, scope);

    const name = usbDeviceName(device, node.name);
    const nodeDevices = node.kube.resource(descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema, TEST_MANAGER);
    await waitFor('the NodeUSBDevice', () => nodeDevices.get({ name }).catch(() => undefined));
    await nodeDevices.mergePatch({ name }, { spec: { assignedNamespace: ns } });
    const templates = node.kube.resource(resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema, TEST_MANAGER);
    const template = await waitFor('the claim template', () => templates.get({ namespace: ns, name: `${name}-template` }).catch(() => undefined));
    expect(template.metadata.ownerReferences?.[0]?.kind).toBe('USBDevice');

    // The device is on the fixture node, the VM on the story's node: that node advertises free vhci
    // ports, as the DRA daemon's USB/IP gateway would.
    await t.c.nodes.mergePatch(
      { name: nodeName },
      { metadata: { annotations: { [USBIP_TOTAL_PORTS_ANNOTATION]: '8', [USBIP_HS_USED_ANNOTATION]: '0', [USBIP_SS_USED_ANNOTATION]: '0' } } },
    );
    await t.c.vms.create(vm(scope, 'reader', className, { blockDeviceRefs: [{ kind: 'VirtualImage', name: 'ubuntu' }], usbDevices: [{ name }] }));
    await waitFor('the internal VM', () => t.c.kvvms.get({ namespace: ns, name: 'reader' }).catch(() => undefined));
    await kubevirt.start();
    await waitFor('the instance', () => t.c.kvvmis.get({ namespace: ns, name: 'reader' }).catch(() => undefined));
    await kubevirt.run('reader', nodeName);
    const claims = node.kube.resource(resourceClaimDescriptor, ResourceClaimSchema, TEST_MANAGER);
    const claim = await waitFor('the claim', () => claims.get({ namespace: ns, name: `${name}-claim` }).catch(() => undefined));
    expect(claim.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'VirtualMachine', name: 'reader' });
    await t.c.vms.mergePatch({ namespace: ns, name: 'reader' }, { spec: { usbDevices: [] } });
    await waitFor('the claim released', () => gone(() => claims.get({ namespace: ns, name: `${name}-claim` })));

    const seen = await requestsMadeBy(kube, rbac, since);
    const made = (resource: string, verb: string, subresource?: string): boolean =>
      seen.some((s) => 'resource' in s.request && s.request.resource === resource && s.request.verb === verb && s.request.subresource === subresource);
    expect(made('resourceslices', 'list')).toBe(true);
    expect(made('resourceclaims', 'create')).toBe(true);
    expect(made('resourceclaims', 'delete')).toBe(true);
    expect(made('virtualmachines', 'update', 'addresourceclaim')).toBe(true);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
    // What this run did not get to send (a detach of an attached device) is allowed too.
    const group = 'subresources.virtualization.deckhouse.io';
    expect(
      await deniedRequests(t.kube, rbac, [{ verb: 'update', group, resource: 'virtualmachines', subresource: 'removeresourceclaim', namespace: ns }]),
    ).toEqual([]);
  }, 90_000);
});
