import { childLogger, type Logger } from '../log/index.js';
import { Backoff, sleep, type BackoffOptions } from './backoff.js';
import { objectKey, type KubeObject, type ObjectMeta } from './descriptor.js';
import { isGone } from './errors.js';
import type { ResourceClient } from './resource-client.js';
import { Store } from './store.js';
import { runWatch, type WatchEvent } from './watch.js';

export interface InformerHandlers<T> {
  add: (obj: T) => void | Promise<void>;
  update: (obj: T, old: T) => void | Promise<void>;
  delete: (obj: T) => void | Promise<void>;
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
   * Warm start: objects known at a resourceVersion; the informer watches from there first, and if that
   * version has expired (410) it relists and reconciles these objects with add/update/delete.
   */
  resumeFrom?: { resourceVersion: string; objects?: readonly T[] };
  /** Aborting it stops the informer, like stop(). */
  signal?: AbortSignal;
}

export interface InformerStats {
  lists: number;
  watches: number;
  restarts: number;
}

/**
 * List + watch with a local store. Restarts after any watch error or end (capped backoff), relists on
 * 410 Gone, and after a relist emits `delete` for objects that vanished while it was disconnected.
 */
export class Informer<T extends KubeObject> {
  readonly store = new Store<T>();
  /** Resolves after the first complete list; at start() when resuming (the given objects are the store). */
  readonly synced: Promise<void>;
  readonly stats: InformerStats = { lists: 0, watches: 0, restarts: 0 };
  private resourceVersion: string | undefined;
  private readonly handlers: { [E in InformerEvent]: InformerHandlers<T>[E][] } = { add: [], update: [], delete: [] };
  private readonly abort = new AbortController();
  private readonly backoff: Backoff;
  private readonly log: Logger;
  private settleSynced: (err?: Error) => void = () => undefined;
  private loop: Promise<void> | undefined;

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

  /** Register a handler; returns a function that unregisters it. */
  on<E extends InformerEvent>(event: E, handler: InformerHandlers<T>[E]): () => void {
    const list = this.handlers[event];
    list.push(handler);
    return () => list.splice(list.indexOf(handler), 1);
  }

  /** The resourceVersion the next watch resumes from (undefined: the next round relists). */
  get lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  start(): this {
    if (this.loop === undefined && !this.abort.signal.aborted) this.loop = this.run();
    if (this.options.resumeFrom) this.settleSynced();
    if (this.options.signal?.aborted) this.abort.abort();
    return this;
  }

  /** Stop watching; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    this.settleSynced(new Error('informer stopped before it synced'));
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
        await runWatch(this.options.client.rest, this.watchRequest(timeoutSeconds, signal), (e) => this.onEvent(e), () => this.onConnected());
      } catch (err: unknown) {
        failure = err;
        if (isGone(err)) this.resourceVersion = undefined;
      }
      if (signal.aborted) break;
      this.stats.restarts++;
      const delayMs = this.backoff.next();
      this.logRestart(failure, delayMs, Date.now() - startedAt >= timeoutSeconds * 1000);
      await sleep(delayMs, signal);
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
    if (failure !== undefined) this.log.warn({ ...fields, err: failure }, 'watch failed, restarting');
    else if (expected) this.log.debug(fields, 'watch timed out, restarting');
    else this.log.warn(fields, 'watch ended early, restarting');
  }

  private async relist(signal: AbortSignal): Promise<void> {
    const { client, namespace, labelSelector, fieldSelector } = this.options;
    const list = await client.listRaw({ namespace, labelSelector, fieldSelector, signal });
    this.stats.lists++;
    const seen = new Set<string>();
    for (const raw of list.items) {
      seen.add(objectKey(metaOf(raw)));
      const obj = this.validate(raw);
      if (obj) this.upsert(obj);
    }
    for (const key of this.store.keys()) {
      const gone = seen.has(key) ? undefined : this.store.delete(key);
      if (gone) this.emit('delete', gone);
    }
    this.resourceVersion = list.resourceVersion;
    this.settleSynced();
  }

  private onEvent(event: WatchEvent): void {
    const meta = metaOf(event.object);
    if (event.type === 'DELETED') {
      const old = this.store.delete(objectKey(meta));
      const obj = this.validate(event.object) ?? old;
      if (obj) this.emit('delete', obj);
    } else if (event.type !== 'BOOKMARK') {
      const obj = this.validate(event.object);
      if (obj) this.upsert(obj);
    }
    this.resourceVersion = meta.resourceVersion ?? this.resourceVersion;
  }

  private upsert(obj: T): void {
    const old = this.store.set(obj);
    if (old === undefined) this.emit('add', obj);
    else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit('update', obj, old);
  }

  private validate(raw: unknown): T | undefined {
    try {
      return this.options.client.parse(raw);
    } catch (err: unknown) {
      this.log.error({ err, object: objectKey(metaOf(raw)) }, 'object skipped: it does not match the schema');
      return undefined;
    }
  }

  private emit<E extends InformerEvent>(event: E, ...args: Parameters<InformerHandlers<T>[E]>): void {
    for (const handler of [...this.handlers[event]]) {
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

function metaOf(raw: unknown): ObjectMeta {
  const meta = (raw as { metadata?: unknown } | null)?.metadata;
  return meta !== null && typeof meta === 'object' ? meta : {};
}
