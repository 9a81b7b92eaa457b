import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { writeFixtureSysfs } from '../discovery/index.js';
import { FakeKernelExport } from './fake-kernel-export.js';
import { FakeKernelImport } from './fake-kernel-import.js';
import { planDevices } from './gateway.js';
import { UsbipImporter } from './importer.js';
import { prepareRemote, unprepareRemote } from './prepare.js';
import { AttachmentStore } from './records.js';
import { startUsbipServer, type UsbipServer } from './server.js';

const log = pino({ level: 'silent' });
let dir: string;
let server: UsbipServer;
let vhci: FakeKernelImport;
let importer: UsbipImporter;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'usbip-prepare-'));
  await writeFixtureSysfs(join(dir, 'sys'), [{ busId: '3-2', busNum: 3, devNum: 2, vendorId: '046d', productId: 'c52b' }]);
  server = await startUsbipServer({ host: '127.0.0.1', port: 0, sysRoot: join(dir, 'sys'), kernel: new FakeKernelExport(), log });
  vhci = new FakeKernelImport(2);
  importer = new UsbipImporter({ kernel: vhci, store: new AttachmentStore(join(dir, 'state', 'r.json')), log });
  await importer.start();
});
afterEach(async () => {
  vhci.closeAll();
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('prepareRemote / unprepareRemote', () => {
  it('attaches what the plan imports, passes local devices, and reports every failure per device', async () => {
    const plans = planDevices({
      nodeName: 'node-b',
      driver: 'virtualization-usb',
      results: ['usb-local', 'usb-remote', 'usb-unplugged', 'usb-unknown-node'].map((device, i) => ({
        request: 'usb',
        driver: 'virtualization-usb',
        pool: i === 0 ? 'node-b' : i === 3 ? 'node-z' : 'node-a',
        device,
      })),
      published: [
        { pool: 'node-a', name: 'usb-remote', attributes: { busID: { string: '3-2' }, speed: { int: 12 } } },
        { pool: 'node-a', name: 'usb-unplugged', attributes: { busID: { string: '3-9' }, speed: { int: 12 } } },
        { pool: 'node-z', name: 'usb-unknown-node', attributes: { busID: { string: '1-1' } } },
      ],
      addresses: new Map([['node-a', `127.0.0.1:${server.port}`]]),
      ports: await vhci.ports(),
      attached: new Set(),
    });
    const results = await prepareRemote(importer, plans);
    expect(results.map((r) => [r.device, r.kind])).toEqual([
      ['usb-local', 'local'],
      ['usb-remote', 'attached'],
      ['usb-unplugged', 'failed'],
      ['usb-unknown-node', 'failed'],
    ]);
    expect(results[2]).toMatchObject({ reason: expect.stringMatching(/^import of 3-9 from node node-a: .*ST_NODEV/) as unknown });
    expect(results[3]).toMatchObject({ reason: expect.stringMatching(/node node-z advertises no USB\/IP address/) as unknown });
    expect(importer.list().map((r) => r.key)).toEqual(['usb-remote']);

    expect(await unprepareRemote(importer, ['usb-remote', 'usb-local'])).toEqual([{ device: 'usb-remote' }, { device: 'usb-local' }]);
    expect(importer.list()).toEqual([]);
    expect(vhci.calls).toEqual(['attach 0 30002 3', 'detach 0']); // fixture speed 480: high speed (3)
  });
});
