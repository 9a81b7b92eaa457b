import type { Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Tracks in-flight responses and drains a server: stop accepting, let what is in flight finish (each
 * with `Connection: close`, so keep-alive sockets do not linger), force-close at the deadline.
 *
 * In-flight responses sit in reused slots of two arrays, not in a Set: V8 gives a Set (or Map) a new
 * hash table whenever it empties or fills up with deleted entries, allocated straight in the old
 * generation when the Set lives there, so adding and deleting every request left ~120 bytes of
 * old-generation garbage per request (40 when never empty) that only a mark-compact collects: part of
 * what filled the admission function's old generation and paused it (tests/bench/RESULTS.md,
 * admission). The arrays grow to the most requests ever in flight and are then written in place.
 */
export class Drain {
  /** The response in each slot; undefined for a free slot. */
  private readonly slots: Array<ServerResponse | undefined> = [];
  /** Free slot numbers: a stack whose top is `freeCount` (entries above it are stale). */
  private readonly free: number[] = [];
  private freeCount = 0;
  /** Upgraded connections (streams) and how to ask each to end. */
  private readonly streams = new Map<Duplex, AbortController>();
  private started = false;

  get draining(): boolean {
    return this.started;
  }

  get inFlight(): number {
    return this.requestsInFlight + this.streams.size;
  }

  /** Requests being answered (not counting upgraded streams). */
  get requestsInFlight(): number {
    return this.slots.length - this.freeCount;
  }

  /** Called for every upgraded connection; the signal aborts when draining starts (at once if it has). */
  trackStream(socket: Duplex): AbortSignal {
    const controller = new AbortController();
    this.streams.set(socket, controller);
    socket.once('close', () => this.streams.delete(socket));
    if (this.started) controller.abort(new Error('the server is shutting down'));
    return controller.signal;
  }

  /** Called for every request as it arrives; returns its slot, to `release` when its response closes. */
  track(res: ServerResponse): number {
    if (this.started) res.setHeader('connection', 'close');
    const slot = this.freeCount > 0 ? (this.free[--this.freeCount] ?? this.slots.length) : this.slots.length;
    this.slots[slot] = res;
    return slot;
  }

  /** The response in `slot` (from `track`) closed; call once per `track`. */
  release(slot: number): void {
    this.slots[slot] = undefined;
    this.free[this.freeCount++] = slot;
  }

  /** Resolves true when every connection closed before the deadline, false when some were cut. */
  async drain(server: Server, deadlineMs: number): Promise<boolean> {
    this.started = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const res of this.slots) if (res !== undefined) this.closeAfter(res, server);
    for (const stream of this.streams.values()) stream.abort(new Error('the server is shutting down'));
    server.closeIdleConnections();
    const clean = await within(closed, deadlineMs);
    if (!clean) {
      server.closeAllConnections();
      // Upgraded sockets are no longer the HTTP server's connections: closeAllConnections misses them.
      for (const socket of this.streams.keys()) socket.destroy();
      await closed;
    }
    return clean;
  }

  private closeAfter(res: ServerResponse, server: Server): void {
    if (!res.headersSent) res.setHeader('connection', 'close');
    else res.once('finish', () => setImmediate(() => server.closeIdleConnections()));
  }
}

/** Wait for `work` at most `ms` milliseconds: true when it settled in time (rejections count as settled). */
export async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = work.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
