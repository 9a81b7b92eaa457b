import { z } from 'zod';
import { ObjectMetaSchema } from '../api/k8s/core.js';
import { NotFoundError } from '../errors/index.js';
import { childLogger, type Logger } from '../log/index.js';
import { objectKey, type KubeObject, type ObjectRef, type ResourceDescriptor } from './descriptor.js';
import { formatMicroTime, nowMicros } from './microtime.js';
import type { WriteOptions } from './resource-client.js';
import { microTimeSchema, objectReferenceSchema } from './schemas.js';

export const eventDescriptor: ResourceDescriptor = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};

export const eventSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  eventTime: microTimeSchema.nullish(),
  series: z.looseObject({ count: z.number().int(), lastObservedTime: microTimeSchema }).optional(),
  reportingController: z.string().optional(),
  reportingInstance: z.string().optional(),
  action: z.string().optional(),
  reason: z.string().optional(),
  note: z.string().optional(),
  type: z.string().optional(),
  regarding: objectReferenceSchema.optional(),
  related: objectReferenceSchema.optional(),
});
export type KubeEvent = z.infer<typeof eventSchema>;

/** The narrow port the recorder needs; a ResourceClient<KubeEvent> satisfies it. */
export interface EventStore {
  create(event: KubeEvent, opts?: WriteOptions): Promise<KubeEvent>;
  mergePatch(ref: ObjectRef, patch: unknown, opts?: WriteOptions): Promise<KubeEvent>;
}

export interface EventInput {
  type: 'Normal' | 'Warning';
  /** CamelCase, machine-readable (a constant from shared/api). */
  reason: string;
  /** What was done or failed, e.g. `Reconcile`, `Provision`. */
  action: string;
  /** Human-readable detail (cut to 1 KiB). */
  note?: string;
  related?: KubeObject;
}

export interface EventRecorderOptions {
  events: EventStore;
  reportingController: string;
  reportingInstance: string;
  /** A repeat within this time of the last one increments the series instead of a new Event. */
  seriesWindowMs?: number;
  /** How many distinct events to remember for aggregation. */
  maxCached?: number;
  logger?: Logger;
  now?: () => number;
}

interface Series {
  namespace: string;
  name: string;
  count: number;
  lastMs: number;
}

/**
 * Records events.k8s.io/v1 Events about objects. Repeats of the same event (same object, type, reason,
 * action and note) within the series window increment `series.count` on the existing Event.
 * Recording is best effort: failures are logged, never thrown.
 */
export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(private readonly options: EventRecorderOptions) {
    this.log = options.logger ?? childLogger({ component: 'events', controller: options.reportingController });
    this.now = options.now ?? Date.now;
  }

  /** Record one occurrence; resolves once written (or once the failure is logged). */
  async record(regarding: KubeObject, input: EventInput): Promise<void> {
    const key = eventKey(regarding, input);
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.write(key, regarding, input));
    this.chains.set(key, next);
    await next;
    if (this.chains.get(key) === next) this.chains.delete(key);
  }

  private async write(key: string, regarding: KubeObject, input: EventInput): Promise<void> {
    try {
      if (await this.bumpSeries(key)) return;
      await this.create(key, regarding, input);
    } catch (err: unknown) {
      const object = objectKey(regarding.metadata);
      this.log.warn({ err, object, reason: input.reason }, 'event not recorded');
    }
  }

  private async bumpSeries(key: string): Promise<boolean> {
    const known = this.series.get(key);
    const nowMs = this.now();
    if (!known || nowMs - known.lastMs > (this.options.seriesWindowMs ?? 6 * 60_000)) return false;
    const count = known.count + 1;
    const patch = { series: { count, lastObservedTime: formatMicroTime(nowMicros(this.now)) } };
    try {
      await this.options.events.mergePatch({ namespace: known.namespace, name: known.name }, patch);
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return false; // expired or deleted: start a new Event
      throw err;
    }
    this.remember(key, { ...known, count, lastMs: nowMs });
    return true;
  }

  private async create(key: string, regarding: KubeObject, input: EventInput): Promise<void> {
    const micros = nowMicros(this.now);
    const namespace = regarding.metadata.namespace || 'default';
    const name = `${regarding.metadata.name ?? 'object'}.${(BigInt(micros) * 1000n).toString(16)}`;
    const event: KubeEvent = {
      metadata: { namespace, name },
      eventTime: formatMicroTime(micros),
      reportingController: this.options.reportingController,
      reportingInstance: this.options.reportingInstance,
      action: input.action,
      reason: input.reason,
      note: truncateUtf8(input.note ?? '', 1024),
      type: input.type,
      regarding: referenceTo(regarding),
      ...(input.related ? { related: referenceTo(input.related) } : {}),
    };
    await this.options.events.create(event);
    this.remember(key, { namespace, name, count: 1, lastMs: this.now() });
  }

  private remember(key: string, entry: Series): void {
    this.series.delete(key);
    this.series.set(key, entry);
    const oldest = this.series.keys().next();
    if (this.series.size > (this.options.maxCached ?? 4096) && !oldest.done) this.series.delete(oldest.value);
  }
}

/** The ObjectReference an event points at. */
export function referenceTo(obj: KubeObject): z.infer<typeof objectReferenceSchema> {
  const { namespace, name, uid, resourceVersion } = obj.metadata;
  return { apiVersion: obj.apiVersion, kind: obj.kind, namespace, name, uid, resourceVersion };
}

/** What makes two occurrences "the same event" for aggregation. */
export function eventKey(regarding: KubeObject, input: EventInput): string {
  const { namespace, name, uid } = regarding.metadata;
  return JSON.stringify([regarding.kind, namespace, name, uid, input.type, input.reason, input.action, input.note ?? '']);
}

/** Cut a string to at most `maxBytes` of UTF-8 without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    bytes += Buffer.byteLength(ch, 'utf8');
    if (bytes > maxBytes) break;
    out += ch;
  }
  return out;
}
