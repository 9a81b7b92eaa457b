/**
 * Records as CloudEvents to K_SINK (set by a Knative SinkBinding), in binary mode, delivered in the
 * background with bounded concurrency, a bounded queue and retries with capped backoff. stdout stays
 * the record of truth: a record the sink cannot take is counted and logged, never lost from stdout.
 * The event id is a hash of the record line, so a redelivered audit line yields the same id and a
 * receiver can drop the duplicate.
 */
import { createHash } from 'node:crypto';
import { CloudEvent, HTTP } from 'cloudevents';
import { errorMessage } from '../../shared/errors/index.js';
import { Backoff, sleep, type BackoffOptions } from '../../shared/kube/index.js';
import type { Logger } from '../../shared/log/index.js';
import type { KindId } from './kinds/kind.js';
import type { AuditRecord } from './records.js';

export const RECORD_EVENT_TYPE = 'io.deckhouse.virtualization.audit.record.v1';

export type SinkResult = 'delivered' | 'failed' | 'dropped';

export interface SinkOptions {
  readonly url: string;
  readonly source: string;
  /** Extension attributes from K_CE_OVERRIDES (`{"extensions":{...}}`). */
  readonly extensions?: Readonly<Record<string, string>>;
  readonly maxAttempts: number;
  readonly backoff: BackoffOptions;
  readonly concurrency: number;
  readonly queueLimit: number;
  readonly timeoutMs: number;
  readonly log: Logger;
  readonly onResult?: (result: SinkResult) => void;
}

interface Job {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly id: string;
}

/** Knative's retryable answers: 404, 408, 409, 429 and 5xx (network errors are retried too). */
export function isRetryable(status: number): boolean {
  return status === 404 || status === 408 || status === 409 || status === 429 || status >= 500;
}

export class CloudEventSink {
  private readonly queue: Job[] = [];
  private active = 0;
  private idle: Array<() => void> = [];
  private readonly abort = new AbortController();

  constructor(private readonly options: SinkOptions) {}

  /** Queue one record for delivery; returns at once. */
  enqueue(record: AuditRecord, line: string, kind: KindId): void {
    if (this.queue.length >= this.options.queueLimit) {
      this.options.onResult?.('dropped');
      this.options.log.warn({ uid: record.uid }, 'sink queue full; record kept on stdout only');
      return;
    }
    this.queue.push(this.toJob(record, line, kind));
    this.pump();
  }

  /** Wait until every queued record is delivered or given up, or until `deadlineMs`; then stop retrying. */
  async drain(deadlineMs: number): Promise<void> {
    const done = new Promise<void>((resolve) => (this.active === 0 && this.queue.length === 0 ? resolve() : this.idle.push(resolve)));
    const stopWaiting = new AbortController();
    await Promise.race([done, sleep(deadlineMs, stopWaiting.signal)]);
    stopWaiting.abort();
    this.abort.abort();
  }

  get pending(): number {
    return this.queue.length + this.active;
  }

  private toJob(record: AuditRecord, line: string, kind: KindId): Job {
    const id = createHash('sha256').update(line).digest('hex').slice(0, 32);
    const event = new CloudEvent<string>({
      ...this.options.extensions,
      id,
      type: RECORD_EVENT_TYPE,
      source: this.options.source,
      subject: kind,
      time: record.datetime,
      datacontenttype: 'application/json',
      data: line,
    });
    const message = HTTP.binary(event);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(message.headers)) if (value !== undefined) headers[name] = String(value);
    return { headers, body: line, id };
  }

  private pump(): void {
    while (this.active < this.options.concurrency && this.queue.length > 0) {
      const job = this.queue.shift() as Job;
      this.active++;
      void this.deliver(job).finally(() => {
        this.active--;
        this.pump();
        if (this.active === 0 && this.queue.length === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }

  private async deliver(job: Job): Promise<void> {
    const backoff = new Backoff(this.options.backoff);
    let last = '';
    for (let attempt = 1; attempt <= this.options.maxAttempts && !this.abort.signal.aborted; attempt++) {
      const outcome = await this.post(job);
      if (outcome === 'ok') {
        this.options.onResult?.('delivered');
        return;
      }
      last = outcome.detail;
      if (!outcome.retry) break;
      if (attempt < this.options.maxAttempts) await sleep(backoff.next(), this.abort.signal);
    }
    this.options.onResult?.('failed');
    this.options.log.warn({ ceId: job.id, detail: last }, 'sink did not take the record; kept on stdout only');
  }

  private async post(job: Job): Promise<'ok' | { retry: boolean; detail: string }> {
    try {
      const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.timeoutMs)]);
      const res = await fetch(this.options.url, { method: 'POST', headers: job.headers, body: job.body, signal });
      await res.arrayBuffer();
      if (res.ok) return 'ok';
      return { retry: isRetryable(res.status), detail: `HTTP ${res.status}` };
    } catch (err: unknown) {
      return { retry: true, detail: errorMessage(err) };
    }
  }
}
