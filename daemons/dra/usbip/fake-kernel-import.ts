/**
 * FakeKernelImport: vhci_hcd in memory, for tests (this machine has no vhci-hcd module). Ports and
 * their status rows as the kernel prints them (8 high-speed then 8 SuperSpeed ports by default);
 * an attached port keeps the socket, so a test can drive the URB phase through `socketOf(port)` as
 * the kernel would; when the peer disconnects the port becomes free again. `busy` makes an attach
 * to that port fail with EBUSY once (someone else took it meanwhile). `deviceNode` SIMULATES the
 * enumeration of an attached device: bus 7 (high-speed) or 8 (SuperSpeed), device number port + 2
 * on its hub, `/dev/bus/usb/...` path and char major 189 as the kernel would give them; no device
 * node exists on this machine.
 */
import type { Socket } from 'node:net';
import { usbDevicePath } from '../discovery/index.js';
import { PortBusyError, VDEV_ST_NULL, VDEV_ST_USED, type KernelImport, type LocalDeviceNode, type VhciHub, type VhciPort } from './kernel-import.js';

interface PortState {
  hub: VhciHub;
  port: number;
  used?: { socket: Socket; devid: number; speed: number };
}

/** Local bus numbers of the two fake root hubs. */
const BUS: Readonly<Record<VhciHub, number>> = { hs: 7, ss: 8 };

export class FakeKernelImport implements KernelImport {
  private readonly state: PortState[];
  readonly calls: string[] = [];
  readonly busy = new Set<number>();

  constructor(portsPerHub = 8) {
    this.state = [
      ...Array.from({ length: portsPerHub }, (_, i): PortState => ({ hub: 'hs', port: i })),
      ...Array.from({ length: portsPerHub }, (_, i): PortState => ({ hub: 'ss', port: portsPerHub + i })),
    ];
  }

  ports(): Promise<VhciPort[]> {
    return Promise.resolve(
      this.state.map((p) => ({
        hub: p.hub,
        port: p.port,
        status: p.used === undefined ? VDEV_ST_NULL : VDEV_ST_USED,
        speed: p.used?.speed ?? 0,
        devid: p.used?.devid ?? 0,
        sockfd: 0,
        localBusId: p.used === undefined ? '0-0' : `${BUS[p.hub]}-${(p.port % this.perHub()) + 1}`,
      })),
    );
  }

  attach(port: number, socket: Socket, devid: number, speed: number): Promise<void> {
    this.calls.push(`attach ${port} ${devid.toString(16)} ${speed}`);
    const p = this.state.find((s) => s.port === port);
    if (p === undefined) return Promise.reject(new Error(`fake vhci: no port ${port}`));
    if (this.busy.delete(port) || p.used !== undefined) return Promise.reject(new PortBusyError(port));
    p.used = { socket, devid, speed };
    socket.once('close', () => {
      if (p.used?.socket === socket) delete p.used;
    });
    return Promise.resolve();
  }

  detach(port: number): Promise<void> {
    this.calls.push(`detach ${port}`);
    const p = this.state.find((s) => s.port === port);
    if (p?.used === undefined) return Promise.reject(new Error(`fake vhci: port ${port} is not attached`));
    p.used.socket.destroy();
    delete p.used;
    return Promise.resolve();
  }

  /** SIMULATED enumeration: the node an attached port's device would get; rejects for a free port or unknown bus id. */
  deviceNode(localBusId: string): Promise<LocalDeviceNode> {
    const p = this.state.find((s) => s.used !== undefined && `${BUS[s.hub]}-${(s.port % this.perHub()) + 1}` === localBusId);
    if (p === undefined) return Promise.reject(new Error(`fake vhci: no attached device ${localBusId}`));
    const busNum = BUS[p.hub];
    const devNum = (p.port % this.perHub()) + 2;
    return Promise.resolve({ busNum, devNum, devicePath: usbDevicePath(busNum, devNum), major: 189, minor: (busNum - 1) * 128 + (devNum - 1) });
  }

  /** The connection the "kernel" holds for an attached port. */
  socketOf(port: number): Socket | undefined {
    return this.state.find((s) => s.port === port)?.used?.socket;
  }

  /** Close every held connection (test clean-up). */
  closeAll(): void {
    for (const p of this.state) p.used?.socket.destroy();
  }

  private perHub(): number {
    return this.state.length / 2;
  }
}
