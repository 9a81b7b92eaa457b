/**
 * The USB/IP gateway inside the DRA daemon (runDaemon with USBIP_ENABLED, the kernel side simulated
 * since this machine has no usbip modules) against the real apiserver: the node publishes its USB/IP
 * address and free vhci ports on its Node object, the stock `usbip` client lists the fixture devices
 * at that address, and the server stops with the daemon.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFixtureSysfs } from '../../../daemons/dra/discovery/index.js';
import { NodeSchema, nodeDescriptor } from '../../../shared/api/k8s/resource.js';
import { listRemote } from '../../../daemons/dra/usbip/client.js';
import { ADDRESS_ANNOTATION, GATEWAY_NODE_LABEL, HS_FREE_LABEL, parseAddress, SS_FREE_LABEL } from '../../../daemons/dra/usbip/gateway.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { fixtureNode, gatewayEnv, startDaemon, TEST_MANAGER, type FixtureNode, type RunningDaemon } from '../dra/harness.js';

const run = promisify(execFile);
let node: FixtureNode;
let daemon: RunningDaemon;

beforeAll(async () => {
  node = await fixtureNode('usbip-gw');
  await writeFixtureSysfs(node.sysRoot, [{ busId: '3-2', busNum: 3, devNum: 2, vendorId: '046d', productId: 'c52b', speed: '12' }]);
  daemon = startDaemon(node, gatewayEnv(node));
  await daemon.handle.started;
});

afterAll(async () => {
  await daemon?.stop();
  await node?.cleanup();
});

async function nodeObject(): Promise<{ labels: Record<string, string>; annotations: Record<string, string> }> {
  const n = await node.kube.resource(nodeDescriptor, NodeSchema, TEST_MANAGER).get({ name: node.name });
  return { labels: n.metadata.labels ?? {}, annotations: n.metadata.annotations ?? {} };
}

describe('the USB/IP gateway in the DRA daemon', () => {
  it('marks its Node with the USB/IP address and free high- and super-speed ports', async () => {
    const { labels, annotations } = await waitFor('node marks', async () => {
      const n = await nodeObject();
      return n.annotations[ADDRESS_ANNOTATION] !== undefined ? n : undefined;
    });
    expect(labels).toMatchObject({ 'usb-gateway': 'true', [GATEWAY_NODE_LABEL]: 'any', [HS_FREE_LABEL]: 'true', [SS_FREE_LABEL]: 'true' });
    expect(annotations).toMatchObject({ 'usb.virtualization.deckhouse.io/usbip-total-ports': '16', 'usb.virtualization.deckhouse.io/usbip-used-ports': '0' });
    expect(annotations[ADDRESS_ANNOTATION]).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it("serves the stock usbip client at the advertised address from the monitor's devices", async () => {
    const address = parseAddress((await nodeObject()).annotations[ADDRESS_ANNOTATION] ?? '');
    if (address === undefined) throw new Error('no usbip-address annotation');
    const { stdout } = await run('usbip', ['--tcp-port', String(address.port), 'list', '-r', address.host], { timeout: 30_000 });
    expect(stdout).toMatch(/^\s+3-2: Logitech, Inc\. : .*\(046d:c52b\)$/m);
  });

  it('closes the USB/IP server when the daemon stops', async () => {
    const address = parseAddress((await nodeObject()).annotations[ADDRESS_ANNOTATION] ?? '');
    if (address === undefined) throw new Error('no usbip-address annotation');
    await daemon.stop();
    await expect(listRemote({ ...address, timeoutMs: 5_000 })).rejects.toThrow(/cannot connect/);
  });
});
