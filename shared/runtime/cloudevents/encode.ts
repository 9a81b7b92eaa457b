import { HTTP, type CloudEvent } from 'cloudevents';
import type { ErrorBody } from '../http/errors.js';
import { isJsonMediaType, mediaType } from '../http/json.js';
import { jsonReply, type Reply } from '../http/reply.js';
import type { SingleMode } from './decode.js';

/** The outcome of one element of a batch: the reply event, nothing (204) or an error. */
export interface BatchResult {
  readonly index: number;
  readonly id: string | undefined;
  readonly status: number;
  readonly event?: CloudEvent<unknown>;
  readonly error?: ErrorBody;
}

/** Answer a single event in the mode it came in; no reply event gives 204. */
export function encodeReply(mode: SingleMode, event: CloudEvent<unknown> | void): Reply {
  if (event === undefined) return { status: 204, headers: {}, body: undefined };
  const message = mode === 'binary' ? HTTP.binary(event) : HTTP.structured(event);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) headers[name] = String(value);
  }
  const body = mode === 'binary' ? binaryData(event) : (message.body as string);
  return { status: 200, headers, body };
}

/**
 * Answer a batch with 200 and one result per element, in order:
 * `{"results":[{"index":0,"id":"a","status":200,"event":{...}},{"index":1,"status":400,"error":{...}}]}`.
 */
export function encodeBatchReply(results: readonly BatchResult[]): Reply {
  return jsonReply(200, { results });
}

/**
 * The data of a binary-mode reply. Encoded here rather than by the SDK, which sends a string as raw
 * text even under a JSON content type (so `"pong"` would go out as `pong`).
 */
function binaryData(event: CloudEvent<unknown>): string | Buffer | undefined {
  const { data } = event;
  if (data === undefined) return undefined;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const type = mediaType(event.datacontenttype);
  const asText = typeof data === 'string' && type !== '' && !isJsonMediaType(type);
  return asText ? data : JSON.stringify(data);
}
