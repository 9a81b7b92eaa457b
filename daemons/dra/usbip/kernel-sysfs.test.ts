/**
 * The real kernel ports (SysfsKernelExport, SysfsKernelImport) on fixture trees: the files they
 * read and the exact text they write. The kernel's reaction is not here (no usbip modules on this
 * machine); the fakes stand for it elsewhere.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFixtureSysfs } from '../discovery/index.js';
import { SysfsKernelExport } from './kernel-export.js';
import { choosePort, parseVhciStatus, SysfsKernelImport, VDEV_ST_NULL } from './kernel-import.js';

let root: string;
const open: Socket[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'usbip-sysfs-'));
});
afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  await rm(root, { recursive: true, force: true });
});

/** A connected TCP socket (the other end is accepted and kept open). */
async function connectedSocket(): Promise<Socket> {
  const server = createServer((peer) => open.push(peer));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const socket = await new Promise<Socket>((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
  });
  server.close();
  open.push(socket);
  return socket;
}

const STATUS = `hub port sta spd dev      sockfd local_busid
hs  0000 006 003 00030002 000009 7-1
hs  0001 004 000 00000000 000000 0-0
hs  0002 004 000 00000000 000000 0-0
ss  0003 004 000 00000000 000000 0-0
`;

describe('vhci status', () => {
  it('parses the rows as the kernel prints them, skipping the header', () => {
    const { ports, problems } = parseVhciStatus(STATUS);
    expect(problems).toEqual([]);
    expect(ports[0]).toEqual({ hub: 'hs', port: 0, status: 6, speed: 3, devid: 0x00030002, sockfd: 9, localBusId: '7-1' });
    expect(ports.map((p) => p.port)).toEqual([0, 1, 2, 3]);
  });

  it('names a line it cannot parse instead of guessing', () => {
    expect(parseVhciStatus('hs 0000 garbage\n').problems).toEqual(['unparsable vhci status line: "hs 0000 garbage"']);
  });

  it('chooses the lowest free port of the hub the speed needs, skipping ports found busy', () => {
    const { ports } = parseVhciStatus(STATUS);
    expect(choosePort(ports, 3)).toBe(1);
    expect(choosePort(ports, 2, new Set([1]))).toBe(2);
    expect(choosePort(ports, 5)).toBe(3);
    expect(choosePort(ports, 5, new Set([3]))).toBeUndefined();
    expect(
      choosePort(
        ports.filter((p) => p.status !== VDEV_ST_NULL),
        1,
      ),
    ).toBeUndefined();
  });
});

describe('SysfsKernelImport', () => {
  async function vhciTree(): Promise<string> {
    const dir = join(root, 'devices', 'platform', 'vhci_hcd.0');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'status'), STATUS);
    await writeFile(join(dir, 'status.1'), 'hub port sta spd dev      sockfd local_busid\nhs  0016 004 000 00000000 000000 0-0\n');
    await writeFile(join(dir, 'attach'), '');
    await writeFile(join(dir, 'detach'), '');
    await mkdir(join(root, 'bus', 'platform', 'devices'), { recursive: true });
    await symlink(dir, join(root, 'bus', 'platform', 'devices', 'vhci_hcd.0'));
    return dir;
  }

  it("reads every controller's status file through the platform bus link", async () => {
    await vhciTree();
    expect((await new SysfsKernelImport(root).ports()).map((p) => p.port)).toEqual([0, 1, 2, 3, 16]);
  });

  it('writes "<port> <sockfd> <devid> <speed>" to attach and "<port>" to detach', async () => {
    const dir = await vhciTree();
    const socket = await connectedSocket();
    const fd = (socket as unknown as { _handle: { fd: number } })._handle.fd;
    await new SysfsKernelImport(root).attach(1, socket, 0x00030002, 3);
    expect(await readFile(join(dir, 'attach'), 'utf8')).toBe(`1 ${fd} 196610 3`);
    await new SysfsKernelImport(root).detach(1);
    expect(await readFile(join(dir, 'detach'), 'utf8')).toBe('1');
  });

  it('says the module is missing when there is no vhci_hcd', async () => {
    await expect(new SysfsKernelImport(root).ports()).rejects.toThrow('is the vhci-hcd module loaded?');
  });
});

describe('SysfsKernelExport', () => {
  async function exportTree(): Promise<{ dev: string; host: string; usb: string }> {
    await writeFixtureSysfs(root, [{ busId: '3-2', busNum: 3, devNum: 2, vendorId: '046d', productId: 'c52b' }]);
    const drivers = join(root, 'bus', 'usb', 'drivers');
    const host = join(drivers, 'usbip-host');
    const usb = join(drivers, 'usb');
    for (const d of [host, usb]) await mkdir(d, { recursive: true });
    for (const f of ['match_busid', 'bind', 'unbind', 'rebind']) await writeFile(join(host, f), '');
    await writeFile(join(usb, 'unbind'), '');
    const dev = join(root, 'bus', 'usb', 'devices', '3-2');
    await symlink(usb, join(dev, 'driver'));
    return { dev, host, usb };
  }

  it('reads usbip_status: missing = unbound, 1 available, 2 used, 3 error', async () => {
    const { dev } = await exportTree();
    const kernel = new SysfsKernelExport(root);
    expect(await kernel.state('3-2')).toBe('unbound');
    for (const [text, state] of [
      ['1\n', 'available'],
      ['2\n', 'used'],
      ['3\n', 'error'],
    ] as const) {
      await writeFile(join(dev, 'usbip_status'), text);
      expect(await kernel.state('3-2')).toBe(state);
    }
  });

  it('binds as `usbip bind` does: unbind from the current driver, add to match_busid, bind', async () => {
    const { host, usb } = await exportTree();
    await new SysfsKernelExport(root).bind('3-2');
    expect(await readFile(join(usb, 'unbind'), 'utf8')).toBe('3-2');
    expect(await readFile(join(host, 'match_busid'), 'utf8')).toBe('add 3-2');
    expect(await readFile(join(host, 'bind'), 'utf8')).toBe('3-2');
  });

  it('says the module is missing when there is no usbip-host, and leaves the device on its own driver', async () => {
    const { host, usb } = await exportTree();
    await rm(host, { recursive: true });
    const kernel = new SysfsKernelExport(root);
    await expect(kernel.bind('3-2')).rejects.toThrow('is the usbip-host module loaded?');
    expect(await readFile(join(usb, 'unbind'), 'utf8')).toBe('');
    await expect(kernel.unbind('3-2')).rejects.toThrow('is the usbip-host module loaded?');
  });

  it('unbinds back to the original driver: unbind, del from match_busid, rebind', async () => {
    const { host } = await exportTree();
    await new SysfsKernelExport(root).unbind('3-2');
    expect(await readFile(join(host, 'unbind'), 'utf8')).toBe('3-2');
    expect(await readFile(join(host, 'match_busid'), 'utf8')).toBe('del 3-2');
    expect(await readFile(join(host, 'rebind'), 'utf8')).toBe('3-2');
  });

  it("hands over by writing the socket's descriptor number to usbip_sockfd", async () => {
    const { dev } = await exportTree();
    const socket = await connectedSocket();
    const fd = (socket as unknown as { _handle: { fd: number } })._handle.fd;
    await new SysfsKernelExport(root).handOver('3-2', socket);
    expect(await readFile(join(dev, 'usbip_sockfd'), 'utf8')).toBe(`${fd}\n`);
  });

  it('never turns a busid from the network into a path', async () => {
    await exportTree();
    await expect(new SysfsKernelExport(root).state('../../../../etc')).rejects.toThrow('not a USB device busid');
  });
});
