/**
 * The export side's kernel port: the usbip-host stub driver through sysfs (protocols.md 4.4).
 * SysfsKernelExport is the real one (needs the usbip-host module and root); FakeKernelExport
 * (fake-kernel-export.ts) stands in for it in tests, since this machine has no usbip-host.
 */
import { access, readFile, readlink, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { basename, join } from 'node:path';
import { isDeviceEntryName, usbDevicesDir } from '../discovery/index.js';

/** usbip_status of a device under usbip-host; 'unbound' when it is not bound to usbip-host. */
export type ExportState = 'unbound' | 'available' | 'used' | 'error';

export interface KernelExport {
  state(busId: string): Promise<ExportState>;
  /** Detach the device from its driver and bind it to usbip-host. */
  bind(busId: string): Promise<void>;
  /** Give the device back to its original driver. */
  unbind(busId: string): Promise<void>;
  /** Hand the connected socket to the stub (`usbip_sockfd`); from then on the kernel owns the stream. */
  handOver(busId: string, socket: Socket): Promise<void>;
  /** After the import reply is written: drop this process's hold on the socket, the connection stays up. */
  release(busId: string, socket: Socket): void;
}

const STATUS: Readonly<Record<string, ExportState>> = { '1': 'available', '2': 'used', '3': 'error' };

/** Throws unless the busid names a USB device (never a path: it comes from the network). */
export function checkBusId(busId: string): void {
  if (!isDeviceEntryName(busId)) throw new Error(`not a USB device busid: ${JSON.stringify(busId)}`);
}

export class SysfsKernelExport implements KernelExport {
  private readonly driverDir: string;

  constructor(private readonly sysRoot: string) {
    this.driverDir = join(sysRoot, 'bus', 'usb', 'drivers', 'usbip-host');
  }

  private deviceFile(busId: string, name: string): string {
    checkBusId(busId);
    return join(usbDevicesDir(this.sysRoot), busId, name);
  }

  async state(busId: string): Promise<ExportState> {
    try {
      return STATUS[(await readFile(this.deviceFile(busId, 'usbip_status'), 'utf8')).trim()] ?? 'error';
    } catch (err: unknown) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'unbound';
      throw err;
    }
  }

  /** The stub driver must be there before a device leaves its own driver for it. */
  private async requireStub(): Promise<void> {
    try {
      await access(this.driverDir);
    } catch (err: unknown) {
      throw new Error(`usbip-host not found at ${this.driverDir} (is the usbip-host module loaded? modprobe usbip-host on the node)`, { cause: err });
    }
  }

  async bind(busId: string): Promise<void> {
    const current = await readlink(this.deviceFile(busId, 'driver')).then(basename, () => undefined);
    if (current === 'usbip-host') return;
    // Checked first: without the stub the device would lose its driver and get none.
    await this.requireStub();
    if (current !== undefined) await writeFile(join(this.sysRoot, 'bus', 'usb', 'drivers', current, 'unbind'), busId);
    await writeFile(join(this.driverDir, 'match_busid'), `add ${busId}`);
    try {
      await writeFile(join(this.driverDir, 'bind'), busId);
    } catch (err: unknown) {
      await writeFile(join(this.driverDir, 'match_busid'), `del ${busId}`).catch(() => undefined);
      throw err;
    }
  }

  async unbind(busId: string): Promise<void> {
    checkBusId(busId);
    await this.requireStub();
    await writeFile(join(this.driverDir, 'unbind'), busId);
    await writeFile(join(this.driverDir, 'match_busid'), `del ${busId}`);
    // rebind: the stub asks the driver core to probe the device's original driver again.
    await writeFile(join(this.driverDir, 'rebind'), busId);
  }

  async handOver(busId: string, socket: Socket): Promise<void> {
    await writeFile(this.deviceFile(busId, 'usbip_sockfd'), `${socketFd(socket)}\n`);
  }

  release(_busId: string, socket: Socket): void {
    // Closes our descriptor only (no FIN: libuv closes, it does not shut down); the stub holds its own reference.
    socket.destroy();
  }
}

/** The descriptor number of a connected TCP socket (libuv keeps it on the handle). */
export function socketFd(socket: Socket): number {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('the socket has no file descriptor to hand to the kernel');
  return fd;
}
