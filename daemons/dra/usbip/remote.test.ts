import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { NotFoundError } from '../../../shared/errors/index.js';
import type { Node, ResourceSlice } from '../../../shared/api/k8s/resource.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { writeFixtureSysfs } from '../discovery/index.js';
import { FakeKernelExport } from './fake-kernel-export.js';
import { FakeKernelImport } from './fake-kernel-import.js';
import { ADDRESS_ANNOTATION } from './gateway.js';
import { UsbipImporter } from './importer.js';
import { SysfsKernelImport } from './kernel-import.js';
import { AttachmentStore } from './records.js';
import { publishedDevices, RemoteImports } from './remote.js';
import { startUsbipServer, type UsbipServer } from './server.js';

const log = pino({ level: 'silent' });
const DRIVER = 'virtualization-usb';
let dir: string;
let server: UsbipServer;
let exporter: FakeKernelExport;
let vhci: FakeKernelImport;
let importer: UsbipImporter;
let nodes: Map<string, Record<string, string>>;
let slices: ResourceSlice[];

function slice(pool: string, generation: number, devices: { name: string; busId: string; speed?: number }[]): ResourceSlice {
  return {
    metadata: { name: `${pool}-${generation}` },
    spec: {
      driver: DRIVER,
      nodeName: pool,
      pool: { name: pool, generation, resourceSliceCount: 1 },
      devices: devices.map((d) => ({ name: d.name, attributes: { busID: { string: d.busId }, speed: { int: d.speed ?? 480 } } })),
    },
  };
}

function remoteImports(): RemoteImports {
  return new RemoteImports({
    driver: DRIVER,
    nodeName: 'node-b',
    importer,
    kernel: vhci,
    slices: { list: () => Promise.resolve({ items: slices, metadata: {} }) as never },
    nodes: {
      get: ({ name }: { name: string }) => {
        const annotations = nodes.get(name);
        if (annotations === undefined) return Promise.reject(new NotFoundError(`node ${name} not found`));
        return Promise.resolve({ metadata: { name, annotations } } as Node);
      },
    },
  });
}

const result = (device: string, pool = 'node-a'): { request: string; driver: string; pool: string; device: string } => ({
  request: 'req-0',
  driver: DRIVER,
  pool,
  device,
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'usbip-remote-'));
  await writeFixtureSysfs(join(dir, 'sys'), [
    { busId: '3-2', busNum: 3, devNum: 2, vendorId: '046d', productId: 'c52b' },
    { busId: '3-3', busNum: 3, devNum: 3, vendorId: '0529', productId: '0001' },
  ]);
  exporter = new FakeKernelExport();
  server = await startUsbipServer({ host: '127.0.0.1', port: 0, sysRoot: join(dir, 'sys'), kernel: exporter, log });
  vhci = new FakeKernelImport(2);
  importer = new UsbipImporter({ kernel: vhci, store: new AttachmentStore(join(dir, 'state', 'r.json')), log });
  await importer.start();
  nodes = new Map([['node-a', { [ADDRESS_ANNOTATION]: `127.0.0.1:${server.port}` }]]);
  slices = [
    slice('node-a', 1, [{ name: 'usb-old', busId: '3-2' }]),
    slice('node-a', 2, [
      { name: 'usb-mouse', busId: '3-2' },
      { name: 'usb-key', busId: '3-3' },
      { name: 'usb-gone', busId: '3-9' },
    ]),
  ];
});
afterEach(async () => {
  vhci.closeAll();
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('RemoteImports', () => {
  it("plans from the slices' newest generation and the node annotation, attaches, and finds the SIMULATED device node", async () => {
    const remote = remoteImports();
    const plans = await remote.plan([result('usb-mouse'), result('usb-local', 'node-b')]);
    expect(plans).toEqual([
      { kind: 'import', device: 'usb-mouse', exportNode: 'node-a', host: '127.0.0.1', port: server.port, busId: '3-2', hub: 'hs' },
      { kind: 'local', device: 'usb-local' },
    ]);
    const outcome = await remote.attach(plans);
    expect(outcome).toEqual({
      kind: 'ok',
      devices: [
        {
          device: 'usb-mouse',
          exportNode: 'node-a',
          busId: '3-2',
          node: { busNum: 7, devNum: 2, devicePath: '/dev/bus/usb/007/002', major: 189, minor: 6 * 128 + 1 },
        },
      ],
    });
    expect(await exporter.state('3-2')).toBe('used');
    expect(await remote.detach(['usb-mouse'])).toEqual([]);
    expect(importer.list()).toEqual([]);
    // The fake stub sees the connection close as the real one does: the device is free again.
    await waitFor('3-2 available again', async () => ((await exporter.state('3-2')) === 'available' ? true : undefined));
  });

  it('refuses a device of an older generation only, a node without annotation and a node that is gone', async () => {
    nodes.set('node-c', {});
    const plans = await remoteImports().plan([result('usb-old'), result('usb-x', 'node-c'), result('usb-y', 'node-gone')]);
    expect(plans.map((p) => (p.kind === 'refuse' ? p.reason : p.kind))).toEqual([
      'device usb-old is not published in pool node-a (unplugged, or its node is gone)',
      'device usb-x is not published in pool node-c (unplugged, or its node is gone)',
      'device usb-y is not published in pool node-gone (unplugged, or its node is gone)',
    ]);
    slices.push(slice('node-c', 1, [{ name: 'usb-x', busId: '1-1' }]), slice('node-gone', 1, [{ name: 'usb-y', busId: '1-1' }]));
    const again = await remoteImports().plan([result('usb-x', 'node-c'), result('usb-y', 'node-gone')]);
    expect(again.map((p) => (p.kind === 'refuse' ? p.reason : p.kind))).toEqual([
      `node node-c advertises no USB/IP address (annotation ${ADDRESS_ANNOTATION})`,
      `node node-gone advertises no USB/IP address (annotation ${ADDRESS_ANNOTATION})`,
    ]);
  });

  it('attaches nothing when a plan is refused, and detaches what it attached when another device fails', async () => {
    const remote = remoteImports();
    const refused = await remote.attach(await remote.plan([result('usb-mouse'), result('usb-old')]));
    expect(refused).toEqual({ kind: 'failed', reasons: ['device usb-old is not published in pool node-a (unplugged, or its node is gone)'] });
    expect(vhci.calls).toEqual([]);

    const failed = await remote.attach(await remote.plan([result('usb-mouse'), result('usb-gone')]));
    expect(failed.kind).toBe('failed');
    expect(failed.kind === 'failed' ? failed.reasons : []).toEqual([expect.stringMatching(/^import of 3-9 from node node-a: .*ST_NODEV/)]);
    expect(importer.list()).toEqual([]);
    expect(vhci.calls).toEqual(['attach 0 30002 3', 'detach 0']);
  });

  it('refuses when the hub has no free port, and keeps a device already attached (idempotent prepare)', async () => {
    const remote = remoteImports();
    expect((await remote.attach(await remote.plan([result('usb-mouse')]))).kind).toBe('ok');
    expect((await remote.attach(await remote.plan([result('usb-key')]))).kind).toBe('ok');
    const full = await remote.plan([result('usb-gone')]);
    expect(full).toEqual([{ kind: 'refuse', device: 'usb-gone', reason: 'no free vhci port on the high-speed hub of node node-b' }]);
    const again = await remote.attach(await remote.plan([result('usb-mouse')]));
    expect(again.kind).toBe('ok');
    expect(importer.list().map((r) => r.key)).toEqual(['usb-mouse', 'usb-key']);
  });

  it('publishedDevices keeps each pool at its highest generation', () => {
    const out = publishedDevices([...slices, slice('node-c', 3, [{ name: 'usb-c', busId: '1-1' }])]);
    expect(out.map((d) => `${d.pool}/${d.name}`)).toEqual(['node-a/usb-mouse', 'node-a/usb-key', 'node-a/usb-gone', 'node-c/usb-c']);
  });
});

describe('KernelImport.deviceNode', () => {
  it('FakeKernelImport: only an attached port has a device', async () => {
    await expect(vhci.deviceNode('7-1')).rejects.toThrow(/no attached device 7-1/);
  });

  it('SysfsKernelImport reads the entry of the local bus id as discovery does, and names a device that never shows up', async () => {
    await writeFixtureSysfs(join(dir, 'vhci-sys'), [{ busId: '7-1', busNum: 7, devNum: 2, vendorId: '046d', productId: 'c52b' }]);
    const kernel = new SysfsKernelImport(join(dir, 'vhci-sys'), 300);
    expect(await kernel.deviceNode('7-1')).toEqual({ busNum: 7, devNum: 2, devicePath: '/dev/bus/usb/007/002', major: 189, minor: 769 });
    await expect(kernel.deviceNode('7-2')).rejects.toThrow(/the imported device 7-2 did not appear at .*7-2/);
  });
});
