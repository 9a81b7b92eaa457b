/**
 * Interoperability with the stock Linux tools: the Debian `usbip` client (usbip-utils, installed by
 * tests/env/install-deps.sh) against our export server on a fixture sysfs tree. The server's kernel
 * side is FakeKernelExport (this machine has no usbip-host module); the client and the wire are real.
 * Needs no apiserver, but a real peer, hence under tests/.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { writeFixtureSysfs, type FixtureDevice } from '../../../daemons/dra/discovery/index.js';
import { FakeKernelExport } from '../../../daemons/dra/usbip/fake-kernel-export.js';
import { startUsbipServer, type UsbipServer } from '../../../daemons/dra/usbip/server.js';
import { usbip } from './stock.js';

const log = pino({ level: 'silent' });

const DEVICES: FixtureDevice[] = [
  { busId: '3-2', busNum: 3, devNum: 2, vendorId: '046d', productId: 'c52b', speed: '12', interfaces: [{ class: '03', subClass: '01', protocol: '02' }] },
  {
    busId: '1-1.4',
    busNum: 1,
    devNum: 5,
    vendorId: '1050',
    productId: '0407',
    speed: '480',
    interfaces: [
      { class: '03', subClass: '00', protocol: '00' },
      { class: '0b', subClass: '00', protocol: '00' },
    ],
  },
];

let root: string;
let kernel: FakeKernelExport;
let open: UsbipServer;
let guarded: UsbipServer;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'usbip-stock-'));
  await writeFixtureSysfs(root, DEVICES);
  kernel = new FakeKernelExport();
  open = await startUsbipServer({ host: '127.0.0.1', port: 0, sysRoot: root, kernel, log });
  guarded = await startUsbipServer({ host: '127.0.0.1', port: 0, sysRoot: root, kernel, log, secret: Buffer.alloc(32, 3), anonymousDevlist: true });
});

afterAll(async () => {
  await open.close();
  await guarded.close();
  await rm(root, { recursive: true, force: true });
});

describe('the Debian usbip client against our server', () => {
  it('`usbip list -r` prints every fixture device with its busid, vendor:product, path and interfaces', async () => {
    const result = await usbip(open.port, ['list', '-r', '127.0.0.1']);
    expect(result).toMatchObject({ code: 0 });
    const out = result.stdout;
    expect(out).toContain('Exportable USB devices');
    // busid, then the names from usb.ids and the ids as the client formats them.
    expect(out).toMatch(/^\s+3-2: Logitech, Inc\. : .*\(046d:c52b\)$/m);
    expect(out).toMatch(/^\s+1-1\.4: Yubico\.com : .*\(1050:0407\)$/m);
    expect(out).toMatch(/^\s+: \/sys\/devices\/pci0000:00\/.*\/usb3\/3-2$/m);
    expect(out).toMatch(/^\s+:\s+0 - Human Interface Device \/ Boot Interface Subclass \/ Mouse \(03\/01\/02\)$/m);
    expect(out).toMatch(/^\s+:\s+1 - .*\(0b\/00\/00\)$/m);
  });

  it('`usbip attach` completes the import handshake with us and fails only where this host lacks vhci_hcd', async () => {
    const result = await usbip(open.port, ['attach', '-r', '127.0.0.1', '-b', '3-2']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('open vhci_driver');
    expect(kernel.calls).toEqual(['bind 3-2', 'handOver 3-2', 'release 3-2']);
  });

  it('with a shared secret set, the stock client may list (if allowed) but its import is refused and nothing is bound', async () => {
    const before = kernel.calls.length;
    expect((await usbip(guarded.port, ['list', '-r', '127.0.0.1'])).stdout).toContain('(1050:0407)');
    const attach = await usbip(guarded.port, ['attach', '-r', '127.0.0.1', '-b', '1-1.4']);
    expect(attach.code).not.toBe(0);
    expect(attach.stderr).toContain('Attach Request for 1-1.4 failed - Request Failed');
    expect(kernel.calls.length).toBe(before);
  });

  it('`usbip attach` of an unknown busid is refused by our server (ST_NODEV) and binds nothing', async () => {
    const before = kernel.calls.length;
    const result = await usbip(open.port, ['attach', '-r', '127.0.0.1', '-b', '9-9']);
    expect(result.stderr).toContain('Attach Request for 9-9 failed');
    expect(kernel.calls.length).toBe(before);
  });
});
