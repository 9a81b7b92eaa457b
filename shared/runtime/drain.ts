import type { Server, ServerResponse } from 'node:http';

/**
 * Tracks in-flight responses and drains a server: stop accepting, let what is in flight finish (each
 * with `Connection: close`, so keep-alive sockets do not linger), force-close at the deadline.
 */
export class Drain {
  private readonly open = new Set<ServerResponse>();
  private started = false;

  get draining(): boolean {
    return this.started;
  }

  get inFlight(): number {
    return this.open.size;
  }

  /** Called for every request as it arrives. */
  track(res: ServerResponse): void {
    if (this.started) res.setHeader('connection', 'close');
    this.open.add(res);
    res.once('close', () => this.open.delete(res));
  }

  /** Resolves true when every connection closed before the deadline, false when some were cut. */
  async drain(server: Server, deadlineMs: number): Promise<boolean> {
    this.started = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const res of this.open) this.closeAfter(res, server);
    server.closeIdleConnections();
    const clean = await within(closed, deadlineMs);
    if (!clean) {
      server.closeAllConnections();
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
