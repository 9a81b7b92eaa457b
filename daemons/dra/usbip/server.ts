/**
 * The export side: a TCP server speaking USB/IP (default port 3240). One request per connection, as
 * in usbipd: OP_REQ_DEVLIST lists this node's exportable devices (read from sysfs by the discovery
 * scan); OP_REQ_IMPORT binds the device to usbip-host if needed, hands the connected socket to the
 * stub and answers with the device record; the connection then carries URBs between the peer and
 * the kernel. Every refusal is an error reply where the protocol has one, then the connection is
 * closed and the device is as it was. Peers authenticate first (auth.ts) unless no secret is set;
 * an import is then allowed only if the `ImportAuthorizer` says the peer's node holds a claim of the
 * device (authorize.ts), before anything is bound.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../../shared/log/index.js';
import { errorMessage } from '../../../shared/errors/index.js';
import { scanUsbDevices, type ScanResult, type UsbDeviceInfo } from '../discovery/index.js';
import { acceptHandshake, type Peer } from './auth.js';
import type { ImportAuthorizer, ImportDenial } from './authorize.js';
import { isExportable, toDevlistEntry, toUsbipDevice } from './devices.js';
import { readMessage, writeAll } from './framing.js';
import { checkBusId, type KernelExport } from './kernel-export.js';
import type { UsbipMetrics } from './metrics.js';
import { decodeOpRequest, encodeDevlistReply, encodeImportReply, encodeOpHeader } from './op-codec.js';
import { OpCode, OpStatus, opStatusName, USBIP_DEFAULT_PORT, UsbipProtocolError, type OpStatusCode } from './protocol.js';

export interface UsbipServerOptions {
  readonly host: string;
  /** 0 picks a free port (tests); default 3240. */
  readonly port?: number;
  readonly sysRoot: string;
  readonly kernel: KernelExport;
  readonly log: Logger;
  /** Shared secret of the nodes; undefined = no authentication (every peer may import: tests, demo). */
  readonly secret?: Buffer | undefined;
  /** Answer OP_REQ_DEVLIST from peers that did not authenticate (the stock `usbip list -r`). */
  readonly anonymousDevlist?: boolean;
  /** A request (and the handshake) must arrive within this long. */
  readonly requestTimeoutMs?: number;
  /** Connections beyond this are closed at once (usbipd: 100). */
  readonly maxConnections?: number;
  readonly metrics?: UsbipMetrics | undefined;
  /**
   * Who may import which device (the DRA daemon: ClaimImportAuthorizer, from the claims). Undefined =
   * every (authenticated) peer may import any device: `startUsbipServer` alone, the stock-client tests.
   */
  readonly authorizer?: ImportAuthorizer | undefined;
  /** The device scan (default: the discovery's sysfs scan of sysRoot). */
  readonly scan?: (sysRoot: string) => Promise<ScanResult>;
}

export interface UsbipServer {
  readonly port: number;
  /** Stop accepting and close management connections; imported devices stay with the kernel. */
  close(): Promise<void>;
}

/** A refusal with its op_common status, answered to the peer. */
class Refusal extends Error {
  constructor(
    readonly status: OpStatusCode,
    message: string,
    /** Set when the authorizer refused: counted in import_denials_total by it. */
    readonly denial?: ImportDenial,
  ) {
    super(message);
  }
}

export async function startUsbipServer(opts: UsbipServerOptions): Promise<UsbipServer> {
  const handler = new ConnectionHandler(opts);
  const server: Server = createServer({ noDelay: true }, (socket) => handler.accept(socket));
  server.maxConnections = opts.maxConnections ?? 100;
  server.on('drop', (data) => opts.log.warn({ remote: data?.remoteAddress }, 'USB/IP connection refused: too many open connections'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? USBIP_DEFAULT_PORT, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (opts.port ?? USBIP_DEFAULT_PORT);
  opts.log.info({ host: opts.host, port, authentication: opts.secret === undefined ? 'none' : 'shared-secret' }, 'USB/IP server listening');
  return {
    port,
    close: async () => {
      handler.closeAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

class ConnectionHandler {
  private readonly open = new Set<Socket>();
  /** Busids with an import in progress in this process: a second import is refused as busy. */
  private readonly importing = new Set<string>();
  private readonly timeoutMs: number;
  private readonly scan: (sysRoot: string) => Promise<ScanResult>;

  constructor(private readonly opts: UsbipServerOptions) {
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.scan = opts.scan ?? scanUsbDevices;
  }

  accept(socket: Socket): void {
    this.open.add(socket);
    this.opts.metrics?.connections.set(undefined, this.open.size);
    socket.on('error', () => undefined); // reported where it matters (reads and writes)
    const remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    void this.serve(socket, this.opts.log.child({ remote }), socket.remoteAddress ?? '').finally(() => {
      this.open.delete(socket);
      this.opts.metrics?.connections.set(undefined, this.open.size);
    });
  }

  closeAll(): void {
    for (const socket of this.open) socket.destroy();
  }

  private count(op: string, result: string): void {
    this.opts.metrics?.requests.inc({ op, result });
  }

  private async serve(socket: Socket, log: Logger, peerAddress: string): Promise<void> {
    let code: number | undefined;
    let peer: Peer;
    try {
      peer = await acceptHandshake(socket, this.opts.secret, this.timeoutMs);
    } catch (err: unknown) {
      this.count('handshake', 'refused');
      log.warn({ err: errorMessage(err) }, 'USB/IP handshake failed; connection closed');
      socket.destroy();
      return;
    }
    try {
      const request = await readMessage(
        socket,
        (buf) => {
          if (buf.length >= 4) code = buf.readUInt16BE(2);
          return decodeOpRequest(buf);
        },
        { timeoutMs: this.timeoutMs, what: 'USB/IP request' },
      );
      if (request.op === 'devlist') await this.devlist(socket, peer, log);
      else if (await this.import(socket, peer, peerAddress, request.busId, log)) return; // the kernel owns the socket now
    } catch (err: unknown) {
      await this.refuseBadRequest(socket, code, err, log);
    }
    socket.end();
  }

  /** A malformed request still gets an error reply when its operation is known. */
  private async refuseBadRequest(socket: Socket, code: number | undefined, err: unknown, log: Logger): Promise<void> {
    const op = code === OpCode.REQ_DEVLIST ? 'devlist' : code === OpCode.REQ_IMPORT ? 'import' : 'unknown';
    const problem = err instanceof UsbipProtocolError ? err.problem : 'error';
    this.count(op, problem);
    log.warn({ op, problem, err: errorMessage(err) }, 'bad USB/IP request; connection closed');
    if (op === 'unknown' || problem === 'truncated') return;
    const replyCode = op === 'devlist' ? OpCode.REP_DEVLIST : OpCode.REP_IMPORT;
    await writeAll(socket, encodeOpHeader(replyCode, OpStatus.ERROR)).catch(() => undefined);
  }

  private async exportable(): Promise<UsbDeviceInfo[]> {
    return (await this.scan(this.opts.sysRoot)).devices.filter(isExportable);
  }

  private async devlist(socket: Socket, peer: Peer, log: Logger): Promise<void> {
    if (peer === 'anonymous' && this.opts.secret !== undefined && this.opts.anonymousDevlist !== true) {
      this.count('devlist', 'unauthenticated');
      log.warn('devlist refused: peer did not authenticate');
      await writeAll(socket, encodeOpHeader(OpCode.REP_DEVLIST, OpStatus.NA));
      return;
    }
    const devices = await this.exportable();
    await writeAll(socket, encodeDevlistReply(devices.map((d) => toDevlistEntry(d, this.opts.sysRoot))));
    this.count('devlist', 'ok');
    log.debug({ devices: devices.length }, 'devlist answered');
  }

  /** True when the socket went to the kernel; false after a refusal (already answered). */
  private async import(socket: Socket, peer: Peer, peerAddress: string, busId: string, log: Logger): Promise<boolean> {
    const ilog = log.child({ busId });
    if (this.importing.has(busId)) return this.refuse(socket, new Refusal(OpStatus.DEV_BUSY, 'another import of this device is in progress'), ilog);
    this.importing.add(busId);
    let boundHere = false;
    let device: UsbDeviceInfo;
    try {
      if (peer === 'anonymous' && this.opts.secret !== undefined) throw new Refusal(OpStatus.NA, 'peer did not authenticate');
      // Read before binding: once under usbip-host the device is unconfigured (no interfaces).
      device = await this.findDevice(busId);
      await this.authorize(busId, peerAddress, ilog);
      const state = await this.opts.kernel.state(busId);
      if (state === 'used') throw new Refusal(OpStatus.DEV_BUSY, 'device is already exported to another peer');
      if (state === 'error') throw new Refusal(OpStatus.DEV_ERR, 'usbip-host reports the device in error');
      if (state === 'unbound') {
        await this.opts.kernel.bind(busId);
        boundHere = true;
      }
      await this.opts.kernel.handOver(busId, socket);
    } catch (err: unknown) {
      if (boundHere)
        await this.opts.kernel.unbind(busId).catch((e: unknown) => ilog.error({ err: errorMessage(e) }, 'could not give the device back to its driver'));
      this.importing.delete(busId);
      return this.refuse(socket, err instanceof Refusal ? err : new Refusal(OpStatus.ERROR, errorMessage(err)), ilog);
    }
    try {
      await writeAll(socket, encodeImportReply({ status: OpStatus.OK, device: toUsbipDevice(device, this.opts.sysRoot) })).catch((err: unknown) =>
        ilog.warn({ err: errorMessage(err) }, 'peer left before the import reply; the stub sees the disconnect'),
      );
    } finally {
      this.opts.kernel.release(busId, socket);
      this.importing.delete(busId);
    }
    this.count('import', 'ok');
    ilog.info('device exported');
    return true;
  }

  /** Throws the Refusal when the authorizer denies the import (or cannot decide). */
  private async authorize(busId: string, peerAddress: string, log: Logger): Promise<void> {
    const authorizer = this.opts.authorizer;
    if (authorizer === undefined) return;
    let decision;
    try {
      decision = await authorizer.authorize({ busId, peerAddress, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err: unknown) {
      throw new Refusal(OpStatus.NA, `could not check the claims of the device: ${errorMessage(err)}`, 'lookup-failed');
    }
    if (!decision.allowed) throw new Refusal(OpStatus.NA, decision.message, decision.reason);
    log.info({ claim: decision.claim }, 'import authorized by claim');
  }

  private async findDevice(busId: string): Promise<UsbDeviceInfo> {
    try {
      checkBusId(busId);
    } catch {
      throw new Refusal(OpStatus.NODEV, 'not a USB device busid');
    }
    const device = (await this.exportable()).find((d) => d.busId === busId);
    if (device === undefined) throw new Refusal(OpStatus.NODEV, 'no such exportable device on this node');
    return device;
  }

  private async refuse(socket: Socket, refusal: Refusal, log: Logger): Promise<false> {
    this.count('import', opStatusName(refusal.status));
    if (refusal.denial !== undefined) this.opts.metrics?.importDenials.inc({ reason: refusal.denial });
    log.warn(
      { status: opStatusName(refusal.status), reason: refusal.message, ...(refusal.denial === undefined ? {} : { denial: refusal.denial }) },
      'import refused; connection closed',
    );
    await writeAll(socket, encodeImportReply({ status: refusal.status })).catch(() => undefined);
    return false;
  }
}
