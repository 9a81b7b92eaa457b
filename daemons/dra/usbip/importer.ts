/**
 * The import side: attach a device of another node to this node's vhci_hcd, and detach it. One
 * operation at a time (port choice must not race). Attachments are recorded (records.ts) and
 * survive a restart of the daemon: `start()` reloads them and drops those whose port the kernel no
 * longer uses (the connection ended while we were away). `attach` is idempotent by key.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../../shared/log/index.js';
import { errorMessage } from '../../../shared/errors/index.js';
import { importRemote, type PeerOptions } from './client.js';
import { choosePort, hubFor, PortBusyError, VDEV_ST_USED, type KernelImport, type VhciPort } from './kernel-import.js';
import type { UsbipMetrics } from './metrics.js';
import { type AttachmentRecord, type AttachmentStore, RecordsCorruptError } from './records.js';

export interface ImporterOptions {
  readonly kernel: KernelImport;
  readonly store: AttachmentStore;
  readonly log: Logger;
  readonly secret?: Buffer | undefined;
  /** Network timeout for connect, handshake and reply (default 10 s). */
  readonly timeoutMs?: number;
  /** How long to wait for vhci to report the attached port in use (default 10 s). */
  readonly attachTimeoutMs?: number;
  readonly metrics?: UsbipMetrics | undefined;
}

export interface AttachRequest {
  /** One attachment per key (the DRA device name). */
  readonly key: string;
  readonly host: string;
  readonly port: number;
  readonly busId: string;
  /** The exporting node's name, for records and logs. */
  readonly node?: string;
}

/** No free vhci port of the hub the device needs. */
export class NoFreePortError extends Error {
  constructor(readonly hub: string) {
    super(`no free vhci port on the ${hub === 'ss' ? 'SuperSpeed' : 'high-speed'} hub`);
    this.name = 'NoFreePortError';
  }
}

const MAX_PORT_TRIES = 4;

export class UsbipImporter {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: ImporterOptions) {}

  /** Load the records and forget those whose vhci port is no longer in use. */
  async start(): Promise<AttachmentRecord[]> {
    return this.serial(async () => {
      try {
        await this.opts.store.load();
      } catch (err: unknown) {
        if (!(err instanceof RecordsCorruptError)) throw err;
        this.opts.log.error({ path: err.path, movedTo: err.movedTo, err: errorMessage(err.cause) }, 'attachment records unreadable; starting without them');
      }
      const used = await this.usedPorts();
      const dropped = await this.opts.store.retain((r) => used.has(r.port));
      for (const r of dropped) this.opts.log.warn({ key: r.key, port: r.port, remote: r.remote }, 'attachment gone while the daemon was away; record dropped');
      return this.opts.store.list();
    });
  }

  list(): AttachmentRecord[] {
    return this.opts.store.list();
  }

  attach(req: AttachRequest): Promise<AttachmentRecord> {
    return this.serial(async () => {
      const log = this.opts.log.child({ key: req.key, remote: `${req.host}:${req.port}`, busId: req.busId });
      const existing = this.opts.store.get(req.key);
      if (existing !== undefined && (await this.usedPorts()).has(existing.port)) return existing;
      try {
        const record = await this.attachNew(req, log);
        this.opts.metrics?.attachments.inc({ op: 'attach', result: 'ok' });
        log.info({ port: record.port, localBusId: record.localBusId }, 'remote device attached');
        return record;
      } catch (err: unknown) {
        this.opts.metrics?.attachments.inc({ op: 'attach', result: 'error' });
        log.warn({ err: errorMessage(err) }, 'attach failed');
        throw err;
      }
    });
  }

  /** Detach and forget; a port the kernel already freed is only forgotten. Unknown key: no-op. */
  detach(key: string): Promise<void> {
    return this.serial(async () => {
      const record = this.opts.store.get(key);
      if (record === undefined) return;
      if ((await this.usedPorts()).has(record.port)) await this.opts.kernel.detach(record.port);
      await this.opts.store.remove(key);
      this.opts.metrics?.attachments.inc({ op: 'detach', result: 'ok' });
      this.opts.log.info({ key, port: record.port }, 'remote device detached');
    });
  }

  private async attachNew(req: AttachRequest, log: Logger): Promise<AttachmentRecord> {
    const peer: PeerOptions = { host: req.host, port: req.port, secret: this.opts.secret, timeoutMs: this.opts.timeoutMs };
    const { socket, device } = await importRemote({ ...peer, busId: req.busId });
    const devid = ((device.busNum & 0xffff) << 16) | (device.devNum & 0xffff);
    let port: number | undefined;
    try {
      const tried = new Set<number>();
      for (;;) {
        port = choosePort(await this.opts.kernel.ports(), device.speed, tried);
        if (port === undefined || tried.size >= MAX_PORT_TRIES) throw new NoFreePortError(hubFor(device.speed));
        try {
          await this.opts.kernel.attach(port, socket, devid >>> 0, device.speed);
          break;
        } catch (err: unknown) {
          if (!(err instanceof PortBusyError)) throw err;
          log.debug({ port }, 'vhci port taken meanwhile; trying another');
          tried.add(port);
        }
      }
    } catch (err: unknown) {
      socket.destroy();
      throw err;
    }
    const attachedPort = port;
    let row: VhciPort;
    try {
      row = await this.awaitUsed(attachedPort);
    } catch (err: unknown) {
      await this.opts.kernel.detach(attachedPort).catch(() => undefined);
      throw err;
    }
    const record: AttachmentRecord = {
      key: req.key,
      port: attachedPort,
      hub: hubFor(device.speed),
      localBusId: row.localBusId,
      remote: { host: req.host, port: req.port, busId: req.busId, ...(req.node === undefined ? {} : { node: req.node }) },
      devid: devid >>> 0,
      speed: device.speed,
      attachedAt: new Date().toISOString(),
    };
    try {
      await this.opts.store.put(record);
    } catch (err: unknown) {
      // Unrecorded attachments would leak a port across restarts: undo.
      await this.opts.kernel.detach(attachedPort).catch(() => undefined);
      throw err;
    }
    return record;
  }

  private async awaitUsed(port: number): Promise<VhciPort> {
    const deadline = Date.now() + (this.opts.attachTimeoutMs ?? 10_000);
    for (;;) {
      const row = (await this.opts.kernel.ports()).find((p) => p.port === port && p.status === VDEV_ST_USED);
      if (row !== undefined) return row;
      if (Date.now() > deadline) throw new Error(`vhci port ${port} not in use ${this.opts.attachTimeoutMs ?? 10_000} ms after attach`);
      await sleep(100);
    }
  }

  private async usedPorts(): Promise<Set<number>> {
    return new Set((await this.opts.kernel.ports()).filter((p) => p.status === VDEV_ST_USED).map((p) => p.port));
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
