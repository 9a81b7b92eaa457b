import { KubeApiError, ProtocolError, TimeoutError, UnavailableError, retryAfterMsOf } from '../errors/index.js';
import { childLogger, type Logger } from '../log/index.js';
import { Backoff, sleep, untilAborted, type BackoffOptions } from './backoff.js';
import { objectKey, type KubeObject, type ObjectMeta } from './descriptor.js';
import { isGone, type InvalidObjectError } from './errors.js';
import type { ResourceClient } from './resource-client.js';
import { Store } from './store.js';
import { runWatch, type WatchEvent } from './watch.js';

export interface InformerHandlers<T> {
  add: (obj: T) => void | Promise<void>;
  /** Also a resync: then `obj === old` (the same stored object, delivered again). */
  update: (obj: T, old: T) => void | Promise<void>;
  delete: (obj: T) => void | Promise<void>;
  /**
   * The latest version of an object does not match the schema: `obj` is what the apiserver sent (only
   * its metadata can be trusted: validate what you read) and `error` names each field. The store keeps
   * it (`store.invalid(key)`); `add`/`update` resume when a version matches again.
   */
  invalid: (obj: KubeObject, error: InvalidObjectError) => void | Promise<void>;
}
export type InformerEvent = keyof InformerHandlers<unknown>;

export interface InformerOptions<T extends KubeObject> {
  client: ResourceClient<T>;
  /** Omit for all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  logger?: Logger;
  /** Delay between restarts; doubles per consecutive failure up to the cap. Default 500 ms .. 30 s. */
  backoff?: BackoffOptions;
  /** Server-side watch timeout; each watch draws between this and twice it (client-go: 300 s). */
  watchTimeoutSeconds?: number;
  /**
   * Every this many milliseconds after the first sync, deliver every stored object again as an
   * `update` (with `obj === old`) and every invalid one as `invalid`. Off when omitted or 0, as in
   * client-go's informers; controllers set it (controller-runtime: 10 h).
   */
  resyncMs?: number;
  /**
   * Warm start: objects known at a resourceVersion; the informer watches from there first, and if that
   * version has expired (410) it relists and reconciles these objects with add/update/delete.
   */
  resumeFrom?: { resourceVersion: string; objects?: readonly T[] };
  /** Aborting it stops the informer, like stop(). */
  signal?: AbortSignal;
  /**
   * Applied to every decoded object before it is stored or delivered (deletes included), e.g. to keep
   * only the fields a reader needs so the store stays small (controller-runtime's cache transforms).
   * It must keep `metadata.name`, `namespace` and `resourceVersion`, and must not throw.
   */
  transform?: (obj: T) => T;
}

/** Why a list or watch failed (the key of `stats.failures`). */
export type InformerFailure = 'gone' | 'throttled' | 'protocol' | 'unavailable' | 'other';

export interface InformerStats {
  lists: number;
  watches: number;
  restarts: number;
  resyncs: number;
  /** Object versions that did not match the schema (each version counted once). */
  invalid: number;
  /** Failed lists and watches by kind: 410 Gone, 429, an undecodable stream, no answer or 5xx, the rest. */
  failures: Record<InformerFailure, number>;
}

interface Registration<E extends InformerEvent, T> {
  readonly handler: InformerHandlers<T>[E];
}

/**
 * List + watch with a local store. Restarts after any watch error or end (capped backoff, at least
 * what a Retry-After asks), relists on 410 Gone, and after a relist emits `delete` for objects that
 * vanished while it was disconnected. Objects are decoded leniently (unknown fields kept); one that
 * does not match the schema is stored and delivered as `invalid`, never silently dropped.
 */
export class Informer<T extends KubeObject> {
  readonly store = new Store<T>();
  /** Resolves after the first complete list; at start() when resuming (the given objects are the store). */
  readonly synced: Promise<void>;
  readonly stats: InformerStats = {
    lists: 0,
    watches: 0,
    restarts: 0,
    resyncs: 0,
    invalid: 0,
    failures: { gone: 0, throttled: 0, protocol: 0, unavailable: 0, other: 0 },
  };
  private resourceVersion: string | undefined;
  private readonly handlers: { [E in InformerEvent]: Registration<E, T>[] } = { add: [], update: [], delete: [], invalid: [] };
  private readonly abort = new AbortController();
  private readonly backoff: Backoff;
  private readonly log: Logger;
  private settleSynced: (err?: Error) => void = () => undefined;
  private loops: Promise<void>[] = [];

  constructor(private readonly options: InformerOptions<T>) {
    const kind = options.client.descriptor.kind;
    this.log = options.logger ?? childLogger({ component: 'informer', resource: kind, namespace: options.namespace ?? '*' });
    this.backoff = new Backoff(options.backoff ?? { initialMs: 500, maxMs: 30_000, jitter: 0.2 });
    this.synced = new Promise<void>((resolve, reject) => {
      this.settleSynced = (err) => (err ? reject(err) : resolve());
    });
    this.synced.catch(() => undefined); // rejection is for awaiters only; never unhandled
    for (const obj of options.resumeFrom?.objects ?? []) this.store.set(obj);
    this.resourceVersion = options.resumeFrom?.resourceVersion;
    options.signal?.addEventListener('abort', () => this.abort.abort(), { once: true });
  }

  /** Register a handler; returns a function that unregisters exactly this registration (twice is harmless). */
  on<E extends InformerEvent>(event: E, handler: InformerHandlers<T>[E]): () => void {
    const list = this.handlers[event];
    const registration: Registration<E, T> = { handler };
    list.push(registration);
    return () => {
      const at = list.indexOf(registration);
      if (at !== -1) list.splice(at, 1);
    };
  }

  /** The resourceVersion the next watch resumes from (undefined: the next round relists). */
  get lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  start(): this {
    if (this.loops.length === 0 && !this.abort.signal.aborted) {
      this.loops.push(this.run());
      const resyncMs = this.options.resyncMs ?? 0;
      if (resyncMs > 0) this.loops.push(this.resyncEvery(resyncMs));
    }
    if (this.options.resumeFrom) this.settleSynced();
    if (this.options.signal?.aborted) this.abort.abort();
    return this;
  }

  /** Stop watching; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.loops);
    this.settleSynced(new Error('informer stopped before it synced'));
  }

  /** Deliver every stored object again: valid ones as `update(obj, obj)`, invalid ones as `invalid`. */
  resync(): void {
    this.stats.resyncs++;
    for (const obj of this.store.list()) this.emit('update', obj, obj);
    for (const key of this.store.invalidKeys()) {
      const entry = this.store.invalid(key);
      if (entry !== undefined) this.emit('invalid', entry.object, entry.error);
    }
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    const base = this.options.watchTimeoutSeconds ?? 300;
    while (!signal.aborted) {
      const timeoutSeconds = base + Math.floor(Math.random() * base);
      const startedAt = Date.now();
      let failure: unknown;
      try {
        if (this.resourceVersion === undefined) await this.relist(signal);
        await runWatch(
          this.options.client.rest,
          this.watchRequest(timeoutSeconds, signal),
          (e) => this.onEvent(e),
          () => this.onConnected(),
        );
      } catch (err: unknown) {
        failure = err;
        const kind = failureKind(err);
        this.stats.failures[kind]++;
        if (kind === 'gone') this.resourceVersion = undefined;
      }
      if (signal.aborted) break;
      this.stats.restarts++;
      const delayMs = Math.max(this.backoff.next(), retryAfterMsOf(failure) ?? 0);
      this.logRestart(failure, delayMs, Date.now() - startedAt >= timeoutSeconds * 1000);
      await sleep(delayMs, signal);
    }
  }

  private async resyncEvery(periodMs: number): Promise<void> {
    const signal = this.abort.signal;
    if (signal.aborted) return;
    try {
      await Promise.race([this.synced, untilAborted(signal)]);
    } catch {
      return;
    }
    for (;;) {
      await sleep(periodMs, signal);
      if (signal.aborted) return;
      this.resync();
    }
  }

  private watchRequest(timeoutSeconds: number, signal: AbortSignal): Parameters<typeof runWatch>[1] {
    const { client, namespace, labelSelector, fieldSelector } = this.options;
    const resourceVersion = this.resourceVersion ?? '';
    return { descriptor: client.descriptor, namespace, labelSelector, fieldSelector, resourceVersion, timeoutSeconds, signal };
  }

  private onConnected(): void {
    this.stats.watches++;
    this.backoff.reset();
  }

  private logRestart(failure: unknown, delayMs: number, expected: boolean): void {
    const fields = { delayMs, relist: this.resourceVersion === undefined, failures: this.backoff.failures };
    if (failure !== undefined) this.log.warn({ ...fields, failure: failureKind(failure), err: failure }, 'watch failed, restarting');
    else if (expected) this.log.debug(fields, 'watch timed out, restarting');
    else this.log.warn(fields, 'watch ended early, restarting');
  }

  private async relist(signal: AbortSignal): Promise<void> {
    const { client, namespace, labelSelector, fieldSelector } = this.options;
    const seen = new Set<string>();
    // Page by page: each raw page is stored (trimmed) before the next is read, not all pages first.
    const resourceVersion = await client.listPages({ namespace, labelSelector, fieldSelector, signal }, (items) => {
      for (const raw of items) {
        seen.add(objectKey(metaOf(raw)));
        this.receive(raw);
      }
    });
    this.stats.lists++;
    for (const key of new Set([...this.store.keys(), ...this.store.invalidKeys()])) {
      const gone = seen.has(key) ? undefined : this.store.delete(key);
      if (gone) this.emit('delete', gone);
    }
    this.resourceVersion = resourceVersion;
    this.settleSynced();
  }

  private onEvent(event: WatchEvent): void {
    const meta = metaOf(event.object);
    if (event.type === 'DELETED') {
      const old = this.store.delete(objectKey(meta));
      const decoded = this.options.client.decode(event.object);
      const obj = decoded.ok ? this.trimmed(decoded.value) : old;
      if (obj) this.emit('delete', obj);
    } else if (event.type !== 'BOOKMARK') {
      this.receive(event.object);
    }
    this.resourceVersion = meta.resourceVersion ?? this.resourceVersion;
  }

  /** An added or modified object (from a list or a watch): stored, and delivered as add, update or invalid. */
  private receive(raw: unknown): void {
    const meta = metaOf(raw);
    const key = objectKey(meta);
    if (!meta.name) {
      this.stats.invalid++;
      this.log.warn({ resourceVersion: meta.resourceVersion }, 'object without a name skipped');
      return;
    }
    const decoded = this.options.client.decode(raw);
    if (!decoded.ok) return this.receiveInvalid(key, raw as KubeObject, decoded.error);
    if (decoded.unknownFields.length > 0) this.log.debug({ object: key, unknownFields: decoded.unknownFields }, 'fields unknown to the schema kept');
    const obj = this.trimmed(decoded.value);
    const old = this.store.set(obj);
    if (old === undefined) this.emit('add', obj);
    else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit('update', obj, old);
  }

  private trimmed(obj: T): T {
    return this.options.transform === undefined ? obj : this.options.transform(obj);
  }

  private receiveInvalid(key: string, object: KubeObject, error: InvalidObjectError): void {
    const rv = object.metadata.resourceVersion;
    if (rv !== undefined && this.store.invalid(key)?.object.metadata.resourceVersion === rv) return; // seen (a relist)
    this.store.setInvalid(key, { object, error });
    this.stats.invalid++;
    this.log.warn({ object: key, resourceVersion: rv, problems: error.problems }, 'object does not match the schema: stored and delivered as invalid');
    this.emit('invalid', object, error);
  }

  private emit<E extends InformerEvent>(event: E, ...args: Parameters<InformerHandlers<T>[E]>): void {
    for (const { handler } of [...this.handlers[event]]) {
      try {
        const result = (handler as (...a: Parameters<InformerHandlers<T>[E]>) => void | Promise<void>)(...args);
        if (result instanceof Promise) result.catch((err: unknown) => this.handlerFailed(event, err));
      } catch (err: unknown) {
        this.handlerFailed(event, err);
      }
    }
  }

  private handlerFailed(event: InformerEvent, err: unknown): void {
    this.log.error({ err, event }, 'informer handler failed');
  }
}

/** The kind of a list or watch failure, by error class and status (never by message). */
export function failureKind(err: unknown): InformerFailure {
  if (isGone(err)) return 'gone';
  if (err instanceof KubeApiError && err.status === 429) return 'throttled';
  if (err instanceof ProtocolError) return 'protocol';
  if (err instanceof UnavailableError || err instanceof TimeoutError) return 'unavailable';
  return 'other';
}

function metaOf(raw: unknown): ObjectMeta {
  const meta = (raw as { metadata?: unknown } | null)?.metadata;
  return meta !== null && typeof meta === 'object' ? meta : {};
}
