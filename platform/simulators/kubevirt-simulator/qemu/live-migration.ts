/**
 * A QEMU live migration between two guest processes, over QMP: the target (started with
 * `-incoming defer`) listens on a TCP port it picks (`migrate-incoming`, the port read back from
 * `query-migrate`'s `socket-address`), the source sends its state there (`migrate`, optionally with a
 * bandwidth cap) and `query-migrate` on the source says how far it got. The answer's reading is pure
 * (`readMigration`, unit-tested).
 */
import type { QemuGuest } from './guest-process.js';

/** What `query-migrate` on the source says, in the terms the node agent writes on the instance. */
export type MigrationProgress =
  | { state: 'none' }
  | { state: 'active'; mode: 'PreCopy' | 'PostCopy'; transferredBytes: number; remainingBytes: number }
  | { state: 'completed'; totalMs: number; downtimeMs: number; transferredBytes: number }
  | { state: 'failed'; reason: string };

export class MigrationError extends Error {
  readonly code = 'GUEST_MIGRATION';
}

type QueryMigrate = {
  status?: string;
  'error-desc'?: string;
  'total-time'?: number;
  downtime?: number;
  ram?: { transferred?: number; remaining?: number };
  'socket-address'?: { type?: string; host?: string; port?: string | number }[];
};

/** `query-migrate`'s answer → progress (QEMU's states: setup, active, postcopy-active, completed, failed, cancelled, ...). */
export function readMigration(answer: unknown): MigrationProgress {
  const q = (answer ?? {}) as QueryMigrate;
  const ram = q.ram ?? {};
  switch (q.status) {
    case undefined:
    case 'none':
      return { state: 'none' };
    case 'completed':
      return { state: 'completed', totalMs: q['total-time'] ?? 0, downtimeMs: q.downtime ?? 0, transferredBytes: ram.transferred ?? 0 };
    case 'failed':
      return { state: 'failed', reason: q['error-desc'] ?? 'QEMU reported the migration failed without a reason' };
    case 'cancelled':
    case 'cancelling':
      return { state: 'failed', reason: 'the migration was cancelled' };
    default:
      return {
        state: 'active',
        mode: q.status.startsWith('postcopy') ? 'PostCopy' : 'PreCopy',
        transferredBytes: ram.transferred ?? 0,
        remainingBytes: ram.remaining ?? 0,
      };
  }
}

/** The TCP port a target listens on (`query-migrate`'s `socket-address`), or a clear error. */
export function listeningPort(answer: unknown): number {
  const address = ((answer ?? {}) as QueryMigrate)['socket-address']?.find((a) => a.type === 'inet');
  const port = Number(address?.port);
  if (!Number.isInteger(port) || port <= 0)
    throw new MigrationError(`the migration target reports no listening TCP port (query-migrate: ${JSON.stringify(answer)})`);
  return port;
}

/** Make the target listen for the source's state on `host` (a port it picks); the port. */
export async function listenForMigration(target: QemuGuest, host: string): Promise<number> {
  return target.qmp(async (run) => {
    await run('migrate-incoming', { uri: `tcp:${host}:0` });
    return listeningPort(await run('query-migrate'));
  });
}

/** Send the source's state to `host:port`; `bandwidthBytesPerSecond` caps it (0: no cap). */
export async function sendMigration(source: QemuGuest, host: string, port: number, bandwidthBytesPerSecond: number): Promise<void> {
  await source.qmp(async (run) => {
    if (bandwidthBytesPerSecond > 0) await run('migrate-set-parameters', { 'max-bandwidth': bandwidthBytesPerSecond });
    await run('migrate', { uri: `tcp:${host}:${port}` });
  });
}

/** How the source's migration stands. */
export async function migrationProgress(source: QemuGuest): Promise<MigrationProgress> {
  return readMigration(await source.qmp((run) => run('query-migrate')));
}

/**
 * After a failed migration: the source goes on. A precopy failure leaves it running; one in the last
 * step may leave it paused, so it is resumed (QMP `cont`). Its run state afterwards.
 */
export async function resumeSource(source: QemuGuest): Promise<string> {
  return source.qmp(async (run) => {
    const before = ((await run('query-status')) as { status?: string }).status ?? '';
    if (before === 'running') return before;
    await run('cont');
    return ((await run('query-status')) as { status?: string }).status ?? '';
  });
}

/** Cancel the source's migration (its migration object was deleted); the source keeps running. */
export async function cancelMigration(source: QemuGuest): Promise<void> {
  await source.qmp((run) => run('migrate_cancel'));
}
