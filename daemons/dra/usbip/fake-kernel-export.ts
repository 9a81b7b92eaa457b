/**
 * FakeKernelExport: the usbip-host stub in memory, for tests (this machine has no usbip-host
 * module). Tracks each device's binding and usbip_status like the kernel does, and once a socket is
 * handed over it plays a minimal stub on it: GET_DESCRIPTOR(DEVICE) on ep0 is answered with an
 * 18-byte device descriptor, other IN requests stall (-EPIPE), OUT requests complete, CMD_UNLINK is
 * answered with status 0 (already completed). When the peer disconnects the device is available
 * again, as with the real stub.
 */
import type { Socket } from 'node:net';
import type { ExportState, KernelExport } from './kernel-export.js';
import { decodeUrb, DIR_IN, encodeUrb, retSubmit, type UrbMessage } from './urb-codec.js';

const EPIPE = -32;

export interface FakeExportDevice {
  readonly idVendor: number;
  readonly idProduct: number;
}

export class FakeKernelExport implements KernelExport {
  readonly states = new Map<string, ExportState>();
  /** Every call, in order, e.g. `bind 3-1`, `handOver 3-1`. */
  readonly calls: string[] = [];
  /** URB messages the fake stub received, per busid. */
  readonly received = new Map<string, UrbMessage[]>();
  /** Make the next call of this name fail (once). */
  readonly failNext = new Set<'bind' | 'handOver' | 'unbind'>();

  constructor(private readonly devices: ReadonlyMap<string, FakeExportDevice> = new Map()) {}

  state(busId: string): Promise<ExportState> {
    return Promise.resolve(this.states.get(busId) ?? 'unbound');
  }

  bind(busId: string): Promise<void> {
    this.calls.push(`bind ${busId}`);
    if (this.failNext.delete('bind')) return Promise.reject(new Error(`fake usbip-host: bind ${busId} failed`));
    this.states.set(busId, 'available');
    return Promise.resolve();
  }

  unbind(busId: string): Promise<void> {
    this.calls.push(`unbind ${busId}`);
    if (this.failNext.delete('unbind')) return Promise.reject(new Error(`fake usbip-host: unbind ${busId} failed`));
    this.states.delete(busId);
    return Promise.resolve();
  }

  handOver(busId: string, socket: Socket): Promise<void> {
    this.calls.push(`handOver ${busId}`);
    if (this.failNext.delete('handOver')) return Promise.reject(new Error(`fake usbip-host: write usbip_sockfd for ${busId} failed`));
    if (this.states.get(busId) !== 'available') return Promise.reject(new Error(`fake usbip-host: ${busId} is not available`));
    this.states.set(busId, 'used');
    socket.once('close', () => {
      if (this.states.get(busId) === 'used') this.states.set(busId, 'available');
    });
    return Promise.resolve();
  }

  release(busId: string, socket: Socket): void {
    this.calls.push(`release ${busId}`);
    this.serve(busId, socket);
  }

  private serve(busId: string, socket: Socket): void {
    let buffered: Buffer = Buffer.alloc(0);
    const log: UrbMessage[] = [];
    this.received.set(busId, log);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const result = decodeUrb(buffered);
        if (result.kind === 'short') return;
        if (result.kind === 'bad') {
          socket.destroy();
          return;
        }
        buffered = buffered.subarray(result.length);
        log.push(result.value);
        const reply = this.answer(busId, result.value);
        if (reply !== undefined) socket.write(encodeUrb(reply));
      }
    });
    socket.on('error', () => undefined);
    socket.resume();
  }

  private answer(busId: string, m: UrbMessage): UrbMessage | undefined {
    if (m.command === 'CMD_UNLINK') return { command: 'RET_UNLINK', seqnum: m.seqnum, devid: 0, direction: 0, ep: 0, status: 0 };
    if (m.command !== 'CMD_SUBMIT') return undefined;
    if (m.direction !== DIR_IN) return retSubmit({ seqnum: m.seqnum, actualLength: m.transferBufferLength });
    const getDeviceDescriptor = m.ep === 0 && m.setup[0] === 0x80 && m.setup[1] === 0x06 && m.setup[3] === 0x01;
    if (!getDeviceDescriptor) return retSubmit({ seqnum: m.seqnum, status: EPIPE });
    const data = deviceDescriptor(this.devices.get(busId) ?? { idVendor: 0, idProduct: 0 }).subarray(0, Math.max(0, m.transferBufferLength));
    return retSubmit({ seqnum: m.seqnum, data, actualLength: data.length });
  }
}

/** An 18-byte USB 2.0 device descriptor (little-endian fields). */
export function deviceDescriptor(d: FakeExportDevice): Buffer {
  const buf = Buffer.from([0x12, 0x01, 0x00, 0x02, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 1]);
  buf.writeUInt16LE(d.idVendor, 8);
  buf.writeUInt16LE(d.idProduct, 10);
  return buf;
}
