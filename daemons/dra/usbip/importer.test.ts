import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { waitFor } from '../../../shared/testing/wait.js';
import { writeFixtureSysfs } from '../discovery/index.js';
import { FakeKernelExport } from './fake-kernel-export.js';
import { FakeKernelImport } from './fake-kernel-import.js';
import { readMessage, writeAll } from './framing.js';
import { NoFreePortError, UsbipImporter } from './importer.js';
import { AttachmentStore } from './records.js';
import { startUsbipServer, type UsbipServer } from './server.js';
import { cmdSubmit, decodeUrb, DIR_IN, encodeUrb } from './urb-codec.js';

const log = pino({ level: 'silent' });
const SECRET = Buffer.alloc(32, 9);

let dir: string;
let exporter: FakeKernelExport;
let vhci: FakeKernelImport;
let server: UsbipServer;
let recordsPath: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'usbip-import-'));
  await writeFixtureSysfs(join(dir, 'sys'), [
    { busId: '3-2', busNum: 3, devNum: 2, vendorId: '046d', productId: 'c52b', speed: '12' },
    { busId: '4-1', busNum: 4, devNum: 3, vendorId: '0781', productId: '5583', speed: '5000' },
  ]);
  exporter = new FakeKernelExport(new Map([['3-2', { idVendor: 0x046d, idProduct: 0xc52b }]]));
  vhci = new FakeKernelImport(2);
  server = await startUsbipServer({ host: '127.0.0.1', port: 0, sysRoot: join(dir, 'sys'), kernel: exporter, log, secret: SECRET });
  recordsPath = join(dir, 'state', 'usb', 'attach-record.json');
});

afterEach(async () => {
  vhci.closeAll();
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

function importer(secret: Buffer | undefined = SECRET): UsbipImporter {
  return new UsbipImporter({ kernel: vhci, store: new AttachmentStore(recordsPath), log, secret, attachTimeoutMs: 5_000 });
}
const request = (key: string, busId: string): { key: string; host: string; port: number; busId: string; node: string } => ({
  key,
  host: '127.0.0.1',
  port: server.port,
  busId,
  node: 'node-a',
});

describe('attach', () => {
  it('imports, attaches to the lowest free high-speed port and records it', async () => {
    const imp = importer();
    await imp.start();
    const record = await imp.attach(request('usb-3-2', '3-2'));
    expect(record).toMatchObject({
      key: 'usb-3-2',
      port: 0,
      hub: 'hs',
      localBusId: '7-1',
      devid: 0x00030002,
      speed: 2,
      remote: { busId: '3-2', node: 'node-a' },
    });
    expect(vhci.calls).toEqual(['attach 0 30002 2']);
    expect(exporter.states.get('3-2')).toBe('used');
    const file = JSON.parse(await readFile(recordsPath, 'utf8')) as { version: number; entries: unknown[] };
    expect(file).toMatchObject({ version: 1, entries: [{ key: 'usb-3-2', port: 0 }] });
    expect((await stat(recordsPath)).mode & 0o777).toBe(0o600);
    expect((await readdir(join(dir, 'state', 'usb'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('carries URBs end to end: what vhci sends reaches the exporting stub and the answer comes back', async () => {
    const imp = importer();
    await imp.start();
    const { port } = await imp.attach(request('usb-3-2', '3-2'));
    const socket = vhci.socketOf(port);
    if (socket === undefined) throw new Error('fake vhci holds no socket');
    await writeAll(
      socket,
      encodeUrb(cmdSubmit({ seqnum: 1, devid: 0x00030002, direction: DIR_IN, transferBufferLength: 18, setup: Buffer.from('8006000100001200', 'hex') })),
    );
    const reply = await readMessage(socket, (b) => decodeUrb(b, 0, { directionOf: () => DIR_IN }), { timeoutMs: 10_000, what: 'RET_SUBMIT' });
    expect(reply.command === 'RET_SUBMIT' && reply.data.readUInt16LE(10)).toBe(0xc52b);
  });

  it('puts a SuperSpeed device on the ss hub', async () => {
    const imp = importer();
    await imp.start();
    expect(await imp.attach(request('usb-4-1', '4-1'))).toMatchObject({ port: 2, hub: 'ss', speed: 5 });
  });

  it('is idempotent by key: a second attach returns the record without a new import', async () => {
    const imp = importer();
    await imp.start();
    const first = await imp.attach(request('usb-3-2', '3-2'));
    expect(await imp.attach(request('usb-3-2', '3-2'))).toEqual(first);
    expect(vhci.calls).toHaveLength(1);
  });

  it('tries the next port when vhci says the chosen one was taken meanwhile', async () => {
    const imp = importer();
    await imp.start();
    vhci.busy.add(0);
    expect(await imp.attach(request('usb-3-2', '3-2'))).toMatchObject({ port: 1 });
    expect(vhci.calls).toEqual(['attach 0 30002 2', 'attach 1 30002 2']);
  });

  it('fails with NoFreePortError when the hub is full, and closes the import so the device is free again', async () => {
    const imp = importer();
    await imp.start();
    vhci.busy.add(0);
    vhci.busy.add(1);
    await expect(imp.attach(request('usb-3-2', '3-2'))).rejects.toBeInstanceOf(NoFreePortError);
    await waitFor('exported device free again', () => exporter.states.get('3-2') === 'available');
    expect(imp.list()).toEqual([]);
  });

  it('records nothing when the exporting node refuses (busy device, unknown busid, wrong secret)', async () => {
    const imp = importer();
    await imp.start();
    await imp.attach(request('first', '3-2'));
    await expect(imp.attach(request('second', '3-2'))).rejects.toThrow('ST_DEV_BUSY');
    await expect(imp.attach(request('ghost', '9-9'))).rejects.toThrow('ST_NODEV');
    await expect(importer(Buffer.alloc(32, 1)).attach(request('intruder', '4-1'))).rejects.toThrow(/handshake/);
    expect(imp.list().map((r) => r.key)).toEqual(['first']);
    expect(vhci.calls).toHaveLength(1);
  });
});

describe('restart and detach', () => {
  it('keeps attachments across a restart of the daemon and detaches them afterwards', async () => {
    const before = importer();
    await before.start();
    const record = await before.attach(request('usb-3-2', '3-2'));
    const after = importer(); // a new process: same records file, same kernel
    expect(await after.start()).toEqual([record]);
    await after.detach('usb-3-2');
    expect(vhci.calls).toEqual(['attach 0 30002 2', 'detach 0']);
    expect(after.list()).toEqual([]);
    expect(JSON.parse(await readFile(recordsPath, 'utf8'))).toEqual({ version: 1, entries: [] });
    await waitFor('exported device free again', () => exporter.states.get('3-2') === 'available');
  });

  it('drops records of ports the kernel freed while the daemon was away', async () => {
    const before = importer();
    await before.start();
    const { port } = await before.attach(request('usb-3-2', '3-2'));
    vhci.socketOf(port)?.destroy();
    await waitFor('port freed', async () => !(await vhci.ports()).some((p) => p.port === port && p.status === 6));
    expect(await importer().start()).toEqual([]);
  });

  it('moves an unreadable records file aside and starts empty', async () => {
    const imp = importer();
    await imp.start();
    await writeFile(recordsPath, '{"version": 7, "entries": "oops"}');
    expect(await importer().start()).toEqual([]);
    expect((await readdir(join(dir, 'state', 'usb'))).some((f) => f.startsWith('attach-record.json.corrupt-'))).toBe(true);
  });

  it('treats detach of an unknown key as done', async () => {
    const imp = importer();
    await imp.start();
    await imp.detach('never-attached');
    expect(vhci.calls).toEqual([]);
  });
});
