/**
 * A small, bounded HTTP load generator: N keep-alive connections on loopback, each sending requests
 * back to back until a request count or a time limit is reached, whichever comes first.
 */
import { Agent, request, type OutgoingHttpHeaders } from 'node:http';
import { nowMs, summarize, type Summary } from './lib.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface LoadSpec {
  readonly url: string;
  readonly method?: string;
  readonly headers?: OutgoingHttpHeaders;
  /** The request body; a function makes one per request (e.g. fresh IDs so nothing repeats). */
  readonly body?: string | Buffer | (() => string | Buffer);
  /** Paced load: each connection starts a request at most every intervalMs (unset: back to back). */
  readonly intervalMs?: number;
  /** Connections, each with one request outstanding at a time. */
  readonly concurrency: number;
  /** Measured requests at most (after the warm-up). */
  readonly requests: number;
  /** Measured time at most. */
  readonly maxMs: number;
  /** Unmeasured requests first, to warm up the server's JIT and the connections. */
  readonly warmup?: number;
  /** Stops the load early (no new request once aborted; those in flight complete). */
  readonly signal?: AbortSignal;
}

export interface LoadResult {
  readonly completed: number;
  readonly failed: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly elapsedMs: number;
  readonly requestsPerSecond: number;
  readonly latencyMs: Summary;
  readonly stoppedBy: 'count' | 'time' | 'signal';
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const url = new URL(spec.url);
  if (!LOOPBACK.has(url.hostname)) throw new Error(`load is only sent to loopback, not ${url.hostname}`);
  const agent = new Agent({ keepAlive: true, maxSockets: spec.concurrency });
  try {
    await drive(spec, url, agent, { count: spec.warmup ?? 0, maxMs: spec.maxMs });
    return await drive(spec, url, agent, { count: spec.requests, maxMs: spec.maxMs });
  } finally {
    agent.destroy();
  }
}

async function drive(spec: LoadSpec, url: URL, agent: Agent, limit: { count: number; maxMs: number }): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let issued = 0;
  let failed = 0;
  const start = nowMs();
  const deadline = start + limit.maxMs;
  const worker = async (): Promise<void> => {
    for (let mine = 0; issued < limit.count && nowMs() < deadline && spec.signal?.aborted !== true; mine++) {
      const due = start + mine * (spec.intervalMs ?? 0);
      const wait = due - nowMs();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      issued += 1;
      const sent = nowMs();
      const status = await once(spec, url, agent);
      latencies.push(nowMs() - sent);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (!/^2\d\d$/.test(status)) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  const elapsedMs = nowMs() - start;
  return {
    completed: latencies.length,
    failed,
    statuses,
    elapsedMs,
    requestsPerSecond: (latencies.length / elapsedMs) * 1000,
    latencyMs: summarize(latencies),
    stoppedBy: issued >= limit.count ? 'count' : spec.signal?.aborted === true ? 'signal' : 'time',
  };
}

/** One request; resolves with the status code as text, or the error code when it failed. */
function once(spec: LoadSpec, url: URL, agent: Agent): Promise<string> {
  return new Promise((resolve) => {
    const req = request(url, { method: spec.method ?? 'GET', headers: spec.headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
      res.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    req.end(typeof spec.body === 'function' ? spec.body() : spec.body);
  });
}
