/**
 * The import side's kernel port: vhci_hcd through sysfs (protocols.md 4.5). SysfsKernelImport is the
 * real one (needs the vhci-hcd module and root); FakeKernelImport (fake-kernel-import.ts) stands in
 * for it in tests. Parsing the `status` files and choosing a port are pure functions.
 */
import { readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readDeviceEntry, usbDevicesDir } from '../discovery/index.js';
import { socketFd } from './kernel-export.js';

export type VhciHub = 'hs' | 'ss';

/** vdev status values of the `sta` column. */
export const VDEV_ST_NULL = 4;
export const VDEV_ST_USED = 6;

export interface VhciPort {
  readonly hub: VhciHub;
  /** The port number to write to `attach` / `detach` (global over controllers). */
  readonly port: number;
  readonly status: number;
  readonly speed: number;
  readonly devid: number;
  readonly sockfd: number;
  /** Bus id of the imported device on this node (`0-0` when free). */
  readonly localBusId: string;
}

export interface KernelImport {
  ports(): Promise<VhciPort[]>;
  /** Attach the imported connection; rejects with PortBusyError when the port was taken meanwhile. */
  attach(port: number, socket: Socket, devid: number, speed: number): Promise<void>;
  detach(port: number): Promise<void>;
  /**
   * The local device node of an attached device, by its bus id on this node (the `localBusId` of its
   * vhci port): what the CDI spec passes to the VM. Rejects when the device does not show up.
   */
  deviceNode(localBusId: string): Promise<LocalDeviceNode>;
}

/** Where an imported device appears on this node. */
export interface LocalDeviceNode {
  readonly busNum: number;
  readonly devNum: number;
  /** `/dev/bus/usb/BBB/DDD` */
  readonly devicePath: string;
  readonly major?: number | undefined;
  readonly minor?: number | undefined;
}

export class PortBusyError extends Error {
  constructor(readonly port: number) {
    super(`vhci port ${port} is busy`);
    this.name = 'PortBusyError';
  }
}

const ROW = /^(hs|ss)\s+(\d+)\s+(\d+)\s+(\d+)\s+([0-9a-fA-F]+)\s+(\d+)\s+(\S+)\s*$/;

/** Rows of one or more `status` files; the header and lines that do not parse are left out (and named). */
export function parseVhciStatus(text: string): { ports: VhciPort[]; problems: string[] } {
  const ports: VhciPort[] = [];
  const problems: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('hub ')) continue;
    const m = ROW.exec(line.trim());
    if (m === null) {
      problems.push(`unparsable vhci status line: ${JSON.stringify(line)}`);
      continue;
    }
    ports.push({
      hub: m[1] as VhciHub,
      port: Number(m[2]),
      status: Number(m[3]),
      speed: Number(m[4]),
      devid: Number.parseInt(m[5] ?? '0', 16),
      sockfd: Number(m[6]),
      localBusId: m[7] ?? '0-0',
    });
  }
  return { ports, problems };
}

/** SuperSpeed devices (speed enum 5, 6) need a port of the `ss` hub; all others the `hs` hub. */
export function hubFor(speed: number): VhciHub {
  return speed >= 5 ? 'ss' : 'hs';
}

/** The lowest free port of the right hub, skipping `exclude` (ports found busy meanwhile). */
export function choosePort(ports: readonly VhciPort[], speed: number, exclude: ReadonlySet<number> = new Set()): number | undefined {
  const hub = hubFor(speed);
  return ports
    .filter((p) => p.hub === hub && p.status === VDEV_ST_NULL && !exclude.has(p.port))
    .map((p) => p.port)
    .sort((a, b) => a - b)[0];
}

export class SysfsKernelImport implements KernelImport {
  constructor(
    private readonly sysRoot: string,
    private readonly enumerateTimeoutMs = 10_000,
  ) {}

  /** The controller dir, found through the platform bus (its parent moved between kernels). */
  private async dir(): Promise<string> {
    const link = join(this.sysRoot, 'bus', 'platform', 'devices', 'vhci_hcd.0');
    try {
      return await realpath(link);
    } catch (err: unknown) {
      throw new Error(`vhci_hcd not found at ${link} (is the vhci-hcd module loaded?)`, { cause: err });
    }
  }

  async ports(): Promise<VhciPort[]> {
    const dir = await this.dir();
    const files = (await readdir(dir)).filter((f) => /^status(\.\d+)?$/.test(f));
    const texts = await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8')));
    return parseVhciStatus(texts.join('\n')).ports;
  }

  async attach(port: number, socket: Socket, devid: number, speed: number): Promise<void> {
    try {
      await writeFile(join(await this.dir(), 'attach'), `${port} ${socketFd(socket)} ${devid} ${speed}`);
    } catch (err: unknown) {
      if ((err as NodeJS.ErrnoException).code === 'EBUSY') throw new PortBusyError(port);
      throw err;
    }
    // vhci took its own reference to the socket; closing ours does not end the connection.
    socket.destroy();
  }

  async detach(port: number): Promise<void> {
    await writeFile(join(await this.dir(), 'detach'), String(port));
  }

  /** The device's sysfs entry, read as discovery reads it; vhci enumerates it shortly after attach, so retried for a while. */
  async deviceNode(localBusId: string): Promise<LocalDeviceNode> {
    const path = join(usbDevicesDir(this.sysRoot), localBusId);
    const deadline = Date.now() + this.enumerateTimeoutMs;
    for (;;) {
      const entry = await readDeviceEntry(path);
      if (entry.kind === 'device') {
        const d = entry.device;
        return { busNum: d.busNum, devNum: d.devNum, devicePath: d.devicePath, major: d.major, minor: d.minor };
      }
      if (Date.now() > deadline) throw new Error(`the imported device ${localBusId} did not appear at ${path}: ${entry.problem.reason}`);
      await sleep(100);
    }
  }
}
