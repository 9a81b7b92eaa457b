/**
 * NodePrepareResources over USB/IP against the real apiserver: two fixture nodes, each with its DRA
 * daemon in this process and the gateway on 127.0.0.1 (port 0), one shared secret, the kernel side
 * SIMULATED (FakeKernelExport / FakeKernelImport: no usbip modules here). A claim allocated from node
 * A's pool is prepared on node B: B imports the device from A, the CDI spec on B names the device
 * node vhci gave it, A's export side holds the device; unprepare on B (also after B restarts) detaches
 * it and A's device is free again. Broken cases get a per-claim error while the good claim of the same
 * call is prepared. The export side's claim check (daemons/dra/usbip/authorize.ts): an import of a
 * device no claim holds, or from a peer that is not the node of the claim holding it, is refused
 * (ST_NA, counted by reason on /metrics) and nothing is bound; the same claim reserved for B's pod
 * imports. Node E's gateway has no secret, so the Debian `usbip attach` meets the claim check itself.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { access, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { usbDeviceName } from '../../../daemons/dra/devices.js';
import { writeFixtureSysfs, type FixtureDevice } from '../../../daemons/dra/discovery/index.js';
import { specFileName } from '../../../daemons/dra/plugin/cdi.js';
import { DEVICE_ADDRESSES_ANNOTATION } from '../../../daemons/dra/plugin/prepare.js';
import { FakeKernelExport } from '../../../daemons/dra/usbip/fake-kernel-export.js';
import { FakeKernelImport } from '../../../daemons/dra/usbip/fake-kernel-import.js';
import { ADDRESS_ANNOTATION } from '../../../daemons/dra/usbip/gateway.js';
import {
  NodeSchema,
  ResourceClaimSchema,
  ResourceSliceSchema,
  nodeDescriptor,
  resourceClaimDescriptor,
  resourceSliceDescriptor,
} from '../../../shared/api/k8s/resource.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace } from '../../env/index.js';
import { fixtureNode, gatewayEnv, slicesOf, startDaemon, TEST_MANAGER, type FixtureNode, type RunningDaemon } from '../dra/harness.js';
import { allocatedClaim, DraClient, reserveForPodOn, type ClaimRef } from '../dra/kubelet-client.js';
import { importRemote } from '../../../daemons/dra/usbip/client.js';
import { OpStatus } from '../../../daemons/dra/usbip/protocol.js';
import { usbip } from './stock.js';

const mouse: FixtureDevice = { busId: '3-2', busNum: 3, devNum: 2, vendorId: '046d', productId: 'c52b' };
const key: FixtureDevice = { busId: '3-3', busNum: 3, devNum: 3, vendorId: '0529', productId: '0001' };
const pen: FixtureDevice = { busId: '3-4', busNum: 3, devNum: 4, vendorId: '0781', productId: '5567' };
const stick: FixtureDevice = { busId: '4-1', busNum: 4, devNum: 2, vendorId: '0951', productId: '1666' };
/** Node D's InternalIP: no peer here connects from it. */
const D_ADDRESS = '10.0.0.9';

let a: FixtureNode;
let b: FixtureNode;
let c: FixtureNode;
let d: FixtureNode;
let e: FixtureNode;
let daemonA: RunningDaemon;
let daemonB: RunningDaemon;
let daemonE: RunningDaemon;
let namespace: string;
let mouseName: string;
let keyName: string;
let secretFile: string;
const clients: DraClient[] = [];
/** B's kernel: it outlives a restart of B's daemon, as the real one does. One port per hub. */
const kernelB = { export: new FakeKernelExport(), import: new FakeKernelImport(1) };
/** E's export side, to see what the stock client made it do. */
const kernelE = { export: new FakeKernelExport(), import: new FakeKernelImport() };

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

function draOf(daemon: RunningDaemon): DraClient {
  const socket = daemon.handle.plugin()?.draSocket;
  if (socket === undefined) throw new Error('the plugin does not serve');
  const client = new DraClient(socket, 'v1');
  clients.push(client);
  return client;
}

async function exportState(busId: string): Promise<string> {
  const gateway = daemonA.handle.usbip();
  if (gateway === undefined) throw new Error("node A's gateway does not run");
  return gateway.kernel.export.state(busId);
}

/** A ResourceSlice of a pool whose daemon does not run here (nodes C and D). */
async function foreignSlice(node: FixtureNode, device: string): Promise<void> {
  await node.kube.resource(resourceSliceDescriptor, ResourceSliceSchema, TEST_MANAGER).create({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name: `${node.name}-usb` },
    spec: {
      driver: 'virtualization-usb',
      nodeName: node.name,
      pool: { name: node.name, generation: 1, resourceSliceCount: 1 },
      devices: [{ name: device, attributes: { busID: { string: '1-1' }, speed: { int: 480 } } }],
    },
  });
}

/** A TCP port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

beforeAll(async () => {
  [a, b, c, d, e] = await Promise.all(['usbip-a', 'usbip-b', 'usbip-c', 'usbip-d', 'usbip-e'].map((p) => fixtureNode(p)));
  secretFile = join(a.dir, 'usbip-secret');
  await writeFile(secretFile, randomBytes(48), { mode: 0o600 });
  await writeFixtureSysfs(a.sysRoot, [mouse, key, pen]);
  await writeFixtureSysfs(e.sysRoot, [stick]);
  mouseName = usbDeviceName(mouse, a.name);
  keyName = usbDeviceName(key, a.name);
  namespace = await freshNamespace('usbip-remote');
  daemonA = startDaemon(a, gatewayEnv(a, { USBIP_SECRET_FILE: secretFile }));
  daemonB = startDaemon(b, gatewayEnv(b, { USBIP_SECRET_FILE: secretFile }), undefined, { usbipKernel: kernelB });
  daemonE = startDaemon(e, gatewayEnv(e), undefined, { usbipKernel: kernelE });
  await Promise.all([daemonA.handle.started, daemonB.handle.started, daemonE.handle.started]);
  const nodes = a.kube.resource(nodeDescriptor, NodeSchema, TEST_MANAGER);
  await waitFor("node A's USB/IP address", async () => (await nodes.get({ name: a.name })).metadata.annotations?.[ADDRESS_ANNOTATION]);
  await waitFor("node A's devices published", async () => ((await slicesOf(a.kube, a.name))[0]?.spec.devices?.length ?? 0) === 3);
  await waitFor("node B's USB/IP address", async () => (await nodes.get({ name: b.name })).metadata.annotations?.[ADDRESS_ANNOTATION]);
  await nodes.patchStatus({ name: d.name }, { addresses: [{ type: 'InternalIP', address: D_ADDRESS }] });
  await nodes.mergePatch({ name: c.name }, { metadata: { annotations: { [ADDRESS_ANNOTATION]: `127.0.0.1:${await closedPort()}` } } });
  await foreignSlice(c, 'usb-on-c');
  await foreignSlice(d, 'usb-on-d');
});

afterAll(async () => {
  for (const client of clients) client.close();
  await daemonE?.stop();
  await daemonB?.stop();
  await daemonA?.stop();
  kernelB.import.closeAll();
  for (const node of [a, b, c, d, e]) await node?.cleanup();
});

describe("a claim of node A's pool prepared on node B over USB/IP", () => {
  let claim: ClaimRef;
  const cdiOnB = (uid: string): string => join(b.env.CDI_ROOT, specFileName(uid));

  it("imports the device: the CDI spec on B names vhci's device node, A's export side holds the device", async () => {
    claim = await allocatedClaim(b.kube, namespace, 'mouse', a.name, mouseName);
    await reserveForPodOn(b.kube, claim, b.name);
    const res = await draOf(daemonB).prepare([claim]);
    expect(res.claims[claim.uid]).toEqual({
      error: '',
      devices: [
        {
          request_names: ['req-0'],
          pool_name: a.name,
          device_name: mouseName,
          cdi_device_ids: ['dra.virtualization.deckhouse.io/usb=common', `dra.virtualization.deckhouse.io/usb=${claim.uid}-${mouseName}`],
        },
      ],
    });
    const spec = JSON.parse(await readFile(cdiOnB(claim.uid), 'utf8')) as { devices: { containerEdits: { deviceNodes: unknown[] } }[] };
    // SIMULATED: FakeKernelImport's first high-speed port enumerates as bus 7, device 2.
    expect(spec.devices[0]?.containerEdits.deviceNodes).toEqual([
      { path: '/dev/bus/usb/007/002', hostPath: '/dev/bus/usb/007/002', type: 'c', major: 189, minor: 769, permissions: 'rwm' },
    ]);
    expect(await exists(join(a.env.CDI_ROOT, specFileName(claim.uid)))).toBe(false);
    expect(await exportState(mouse.busId)).toBe('used');
    expect(daemonB.handle.usbip()?.importer.list()).toEqual([
      expect.objectContaining({ key: mouseName, port: 0, localBusId: '7-1', remote: expect.objectContaining({ busId: '3-2', node: a.name }) as unknown }),
    ]);
    const checkpoint = JSON.parse(await readFile(join(b.env.STATE_DIR, 'checkpoint.json'), 'utf8')) as {
      claims: Record<string, { devices: { importedFrom?: string; busId: string }[] }>;
    };
    expect(checkpoint.claims[claim.uid]?.devices).toEqual([expect.objectContaining({ importedFrom: a.name, busId: '3-2' })]);
    const rc = await b.kube.resource(resourceClaimDescriptor, ResourceClaimSchema, TEST_MANAGER).get({ namespace, name: 'mouse' });
    expect(JSON.parse(rc.metadata.annotations?.[DEVICE_ADDRESSES_ANNOTATION] ?? 'null')).toEqual([{ deviceName: mouseName, usbAddress: '007:002' }]);
  });

  it('answers a repeated prepare from the checkpoint without a second import', async () => {
    const again = await draOf(daemonB).prepare([claim]);
    expect(again.claims[claim.uid]?.error).toBe('');
    expect(kernelB.import.calls.filter((x) => x.startsWith('attach'))).toHaveLength(1);
  });

  it('detaches at unprepare after B restarted, and A frees the device', async () => {
    await daemonB.stop();
    daemonB = startDaemon(b, gatewayEnv(b, { USBIP_SECRET_FILE: secretFile }), undefined, { usbipKernel: kernelB });
    await daemonB.handle.started;
    expect(
      daemonB.handle
        .usbip()
        ?.importer.list()
        .map((r) => r.key),
    ).toEqual([mouseName]);
    const res = await draOf(daemonB).unprepare([claim]);
    expect(res.claims[claim.uid]).toEqual({ error: '' });
    expect(await exists(cdiOnB(claim.uid))).toBe(false);
    expect(daemonB.handle.usbip()?.importer.list()).toEqual([]);
    expect(kernelB.import.calls).toContain('detach 0');
    await waitFor("A's device free again", async () => ((await exportState(mouse.busId)) === 'available' ? true : undefined));
  });

  it('gives each broken claim its own error naming the problem and prepares the good claim of the same call', async () => {
    const unreachable = await allocatedClaim(b.kube, namespace, 'unreachable', c.name, 'usb-on-c');
    const noAddress = await allocatedClaim(b.kube, namespace, 'no-address', d.name, 'usb-on-d');
    const good = await allocatedClaim(b.kube, namespace, 'mouse-again', a.name, mouseName);
    await reserveForPodOn(b.kube, good, b.name);
    const noPort = await allocatedClaim(b.kube, namespace, 'no-port', a.name, keyName);
    const res = await draOf(daemonB).prepare([unreachable, good, noAddress, noPort]);
    expect(res.claims[good.uid]?.error).toBe('');
    expect(res.claims[good.uid]?.devices.map((x) => x.device_name)).toEqual([mouseName]);
    expect(res.claims[unreachable.uid]?.error).toMatch(new RegExp(`^USB/IP import refused or failed: import of 1-1 from node ${c.name}: .*connect`));
    expect(res.claims[noAddress.uid]?.error).toBe(
      `USB/IP import refused or failed: node ${d.name} advertises no USB/IP address (annotation ${ADDRESS_ANNOTATION})`,
    );
    // B's one high-speed port is taken by the good claim.
    expect(res.claims[noPort.uid]?.error).toBe(`USB/IP import refused or failed: no free vhci port on the high-speed hub of node ${b.name}`);
    for (const bad of [unreachable, noAddress, noPort]) expect(await exists(cdiOnB(bad.uid))).toBe(false);
    expect(await exportState(key.busId)).not.toBe('used');
    expect(await exportState(mouse.busId)).toBe('used');

    const done = await draOf(daemonB).unprepare([good, unreachable]);
    expect(done.claims).toEqual({ [good.uid]: { error: '' }, [unreachable.uid]: { error: '' } });
    await waitFor("A's device free again", async () => ((await exportState(mouse.busId)) === 'available' ? true : undefined));
  });
});

/** The daemon's /metrics (METRICS_AUTH=none on fixture nodes). */
async function metricsOf(daemon: RunningDaemon): Promise<string> {
  return (await fetch(`http://127.0.0.1:${(await daemon.handle.health).port}/metrics`)).text();
}

const denials = (text: string, reason: string): number =>
  Number(new RegExp(`^d8_virtualization_dra_usbip_import_denials_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

function gatewayPort(daemon: RunningDaemon): number {
  const port = daemon.handle.usbip()?.server.port;
  if (port === undefined) throw new Error('the gateway does not run');
  return port;
}

describe("the export side's claim check", () => {
  it('refuses an import of a device no claim holds (ST_NA), binds nothing and counts it', async () => {
    const secret = await readFile(secretFile);
    await expect(importRemote({ host: '127.0.0.1', port: gatewayPort(daemonA), secret, busId: pen.busId })).rejects.toMatchObject({
      opStatus: OpStatus.NA,
    });
    expect(await exportState(pen.busId)).toBe('unbound');
    expect(denials(await metricsOf(daemonA), 'not-allocated')).toBe(1);
  });

  it("refuses B's import for a claim reserved for a pod on another node, then imports once the claim is B's", async () => {
    const penName = usbDeviceName(pen, a.name);
    const elsewhere = await allocatedClaim(b.kube, namespace, 'pen', a.name, penName);
    await reserveForPodOn(b.kube, elsewhere, d.name);
    const refused = await draOf(daemonB).prepare([elsewhere]);
    expect(refused.claims[elsewhere.uid]?.error).toMatch(new RegExp(`^USB/IP import refused or failed: .*refused the import of ${pen.busId}: ST_NA`));
    expect(await exists(join(b.env.CDI_ROOT, specFileName(elsewhere.uid)))).toBe(false);
    expect(await exportState(pen.busId)).toBe('unbound');
    expect(denials(await metricsOf(daemonA), 'other-node')).toBe(1);

    // The same claim, now reserved for a pod on B: A serves the import (it kept serving after the refusals).
    await reserveForPodOn(b.kube, elsewhere, b.name);
    const allowed = await draOf(daemonB).prepare([elsewhere]);
    expect(allowed.claims[elsewhere.uid]?.error).toBe('');
    expect(await exportState(pen.busId)).toBe('used');
    expect((await draOf(daemonB).unprepare([elsewhere])).claims[elsewhere.uid]).toEqual({ error: '' });
    await waitFor("A's pen free again", async () => ((await exportState(pen.busId)) === 'available' ? true : undefined));
  });

  it('gives the Debian `usbip attach` the refusal as an error while no claim is for its node, and the import once one is', async () => {
    const port = gatewayPort(daemonE);
    const stickName = usbDeviceName(stick, e.name);
    const unclaimed = await usbip(port, ['attach', '-r', '127.0.0.1', '-b', stick.busId]);
    expect(unclaimed.code).not.toBe(0);
    expect(unclaimed.stderr).toContain(`Attach Request for ${stick.busId} failed`);
    const claim = await allocatedClaim(e.kube, namespace, 'stick', e.name, stickName);
    await reserveForPodOn(e.kube, claim, d.name);
    const wrongNode = await usbip(port, ['attach', '-r', '127.0.0.1', '-b', stick.busId]);
    expect(wrongNode.code).not.toBe(0);
    expect(wrongNode.stderr).toContain(`Attach Request for ${stick.busId} failed`);
    expect(kernelE.export.calls).toEqual([]);
    const text = await metricsOf(daemonE);
    expect([denials(text, 'not-allocated'), denials(text, 'other-node')]).toEqual([1, 1]);

    // Reserved for B's pod (B advertises 127.0.0.1): the import goes through; the client then fails
    // only where this host has no vhci_hcd.
    await reserveForPodOn(e.kube, claim, b.name);
    const imported = await usbip(port, ['attach', '-r', '127.0.0.1', '-b', stick.busId]);
    expect(imported.stderr).toContain('open vhci_driver');
    expect(kernelE.export.calls).toEqual([`bind ${stick.busId}`, `handOver ${stick.busId}`, `release ${stick.busId}`]);
  });
});
