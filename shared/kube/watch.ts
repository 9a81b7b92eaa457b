import { createInterface } from 'node:readline';
import { ProtocolError } from '../errors/index.js';
import { resourcePath, type ResourceDescriptor } from './descriptor.js';
import { apiError, statusFromBody, transportError } from './errors.js';
import type { RestTransport } from './rest.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent {
  type: WatchEventType;
  /** The object as sent (not yet validated). */
  object: unknown;
}

export interface WatchRequest {
  descriptor: ResourceDescriptor;
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  resourceVersion: string;
  /** The server ends the watch after this long (a clean end). */
  timeoutSeconds: number;
  signal: AbortSignal;
}

const EVENT_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

/**
 * Decode one line of a watch stream. An ERROR event becomes the error class of its Status code
 * (410 Gone → KubeApiError with status 410), and a line that is not a watch event is a ProtocolError
 * (the server's fault, not a bad request of ours): nothing is silently skipped.
 */
export function decodeWatchLine(line: string, what: string): WatchEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err: unknown) {
    throw new ProtocolError(`${what}: a watch line that is not JSON`, { cause: err });
  }
  const event = parsed as { type?: unknown; object?: unknown } | null;
  if (event?.type === 'ERROR') {
    const code = (event.object as { code?: unknown } | undefined)?.code;
    throw apiError(what, statusFromBody(typeof code === 'number' ? code : 500, event.object));
  }
  if (typeof event?.type !== 'string' || !EVENT_TYPES.has(event.type) || typeof event.object !== 'object' || event.object === null) {
    throw new ProtocolError(`${what}: a watch event without a known type and an object`);
  }
  return { type: event.type as WatchEventType, object: event.object };
}

/**
 * Run one watch from a resourceVersion until the server ends it (resolves) or it fails (rejects with a
 * classified error). `onConnected` fires once the server accepted the watch. Aborting the signal ends
 * it quietly. A connection silent for longer than the server timeout plus a margin is treated as dead.
 */
export async function runWatch(
  rest: RestTransport,
  req: WatchRequest,
  onEvent: (event: WatchEvent) => void,
  onConnected: () => void = () => undefined,
): Promise<void> {
  const what = `watch ${req.descriptor.kind}`;
  const res = await rest.stream({
    method: 'GET',
    path: resourcePath(req.descriptor, { namespace: req.namespace }),
    query: {
      watch: 1,
      resourceVersion: req.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: req.timeoutSeconds,
      labelSelector: req.labelSelector,
      fieldSelector: req.fieldSelector,
    },
    signal: req.signal,
    what,
  });
  onConnected();
  const idleMs = (req.timeoutSeconds + 30) * 1000;
  const idle = setTimeout(() => res.destroy(new Error(`no data for ${idleMs} ms`)), idleMs);
  res.on('data', () => idle.refresh());
  try {
    for await (const line of createInterface({ input: res, crlfDelay: Infinity })) {
      if (line.trim() !== '') onEvent(decodeWatchLine(line, what));
    }
    if (!res.complete && !req.signal.aborted) throw new Error('connection closed mid-stream');
  } catch (err: unknown) {
    throw transportError(what, err, false);
  } finally {
    clearTimeout(idle);
    res.destroy();
  }
}
