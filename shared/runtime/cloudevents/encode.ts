import type { CloudEvent } from 'cloudevents';
import type { ErrorBody } from '../http/errors.js';
import { isJsonMediaType, mediaType } from '../http/json.js';
import { JSON_CONTENT_TYPE, jsonReply, type Reply } from '../http/reply.js';
import type { SingleMode } from './decode.js';
import { encodeHeaderValue } from './header-value.js';

/** The outcome of one element of a batch: the reply event, nothing (204) or an error. */
export interface BatchResult {
  readonly index: number;
  readonly id: string | undefined;
  readonly status: number;
  readonly event?: CloudEvent<unknown>;
  readonly error?: ErrorBody;
}

const STRUCTURED_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8';
const NO_REPLY: Reply = { status: 204, headers: {}, body: undefined };

/** Answer a single event in the mode it came in; no reply event gives 204. */
export function encodeReply(mode: SingleMode, event: CloudEvent<unknown> | void): Reply {
  if (event === undefined) return NO_REPLY;
  if (mode === 'structured') {
    // toJSON: the attributes, time as ISO 8601, and binary data only as data_base64.
    return { status: 200, headers: { 'content-type': STRUCTURED_CONTENT_TYPE }, body: JSON.stringify(event) };
  }
  return { status: 200, headers: binaryHeaders(event), body: binaryData(event) };
}

/**
 * The headers of a binary-mode reply: Content-Type from `datacontenttype` (JSON when unset), every
 * other attribute but the data as a `ce-` header, its value percent-encoded where the binding asks.
 */
function binaryHeaders(event: CloudEvent<unknown>): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': event.datacontenttype ?? JSON_CONTENT_TYPE };
  const attributes = event as unknown as Record<string, unknown>;
  for (const name of Object.keys(attributes)) {
    const value = attributes[name];
    if (value === undefined || value === null || name === 'data' || name === 'data_base64' || name === 'datacontenttype') continue;
    headers[`ce-${name}`] = encodeHeaderValue(name === 'time' ? new Date(value as string).toISOString() : canonicalString(value));
  }
  return headers;
}

/** The canonical string of an attribute value (CloudEvents 1.0 type system); other objects as JSON. */
function canonicalString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? '';
}

/**
 * Answer a batch with 200 and one result per element, in order:
 * `{"results":[{"index":0,"id":"a","status":200,"event":{...}},{"index":1,"status":400,"error":{...}}]}`.
 */
export function encodeBatchReply(results: readonly BatchResult[]): Reply {
  return jsonReply(200, { results });
}

/**
 * The data of a binary-mode reply: bytes as they are, a string as text under a non-JSON type, anything
 * else (a string under a JSON type too: `"pong"`, not `pong`) as JSON.
 */
function binaryData(event: CloudEvent<unknown>): string | Buffer | undefined {
  const { data } = event;
  if (data === undefined) return undefined;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const type = mediaType(event.datacontenttype);
  const asText = typeof data === 'string' && type !== '' && !isJsonMediaType(type);
  return asText ? data : JSON.stringify(data);
}
