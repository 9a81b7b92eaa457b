import type { Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Tracks in-flight responses and drains a server: stop accepting, let what is in flight finish (each
 * with `Connection: close`, so keep-alive sockets do not linger), force-close at the deadline.
 */
export class Drain {
  private readonly open = new Set<ServerResponse>();
  /** Upgraded connections (streams) and how to ask each to end. */
  private readonly streams = new Map<Duplex, AbortController>();
  private started = false;

  get draining(): boolean {
    return this.started;
  }

  get inFlight(): number {
    return this.open.size + this.streams.size;
  }

  /** Requests being answered (not counting upgraded streams). */
  get requestsInFlight(): number {
    return this.open.size;
  }

  /** Called for every upgraded connection; the signal aborts when draining starts (at once if it has). */
  trackStream(socket: Duplex): AbortSignal {
    const controller = new AbortController();
    this.streams.set(socket, controller);
    socket.once('close', () => this.streams.delete(socket));
    if (this.started) controller.abort(new Error('the server is shutting down'));
    return controller.signal;
  }

  /** Called for every request as it arrives; `release` when its response closes. */
  track(res: ServerResponse): void {
    if (this.started) res.setHeader('connection', 'close');
    this.open.add(res);
  }

  release(res: ServerResponse): void {
    this.open.delete(res);
  }

  /** Resolves true when every connection closed before the deadline, false when some were cut. */
  async drain(server: Server, deadlineMs: number): Promise<boolean> {
    this.started = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const res of this.open) this.closeAfter(res, server);
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
