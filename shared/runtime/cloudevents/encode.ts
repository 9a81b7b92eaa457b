import { HTTP, type CloudEvent } from 'cloudevents';
import type { ErrorBody } from '../http/errors.js';
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

const NO_REPLY: Reply = { status: 204, headers: {}, body: undefined };

/**
 * Answer a single event in the mode it came in, by the SDK (`HTTP.binary`, `HTTP.structured`); no reply event gives 204.
 * One mend over the SDK: its binary encoder sends a string datum under a JSON type as bare text, which is not JSON.
 */
export function encodeReply(mode: SingleMode, event: CloudEvent<unknown> | void): Reply {
  if (event === undefined) return NO_REPLY;
  const message = mode === 'structured' ? HTTP.structured(event) : HTTP.binary(event);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) if (value !== undefined) headers[name] = String(value);
  const body = mode === 'binary' && typeof event.data === 'string' && isJsonType(event.datacontenttype) ? JSON.stringify(event.data) : bodyOf(message.body);
  return { status: 200, headers, body };
}

/** `application/json` (also when unset, the binary default) and `+json` types: a string datum there is sent as a JSON string. */
function isJsonType(type: string | undefined): boolean {
  const essence = (type ?? 'application/json').split(';')[0].trim().toLowerCase();
  return essence === 'application/json' || essence.endsWith('+json');
}

/** The SDK's message body as bytes to send: text and bytes as they are, other values as JSON. */
function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return JSON.stringify(body);
}

/**
 * Answer a batch with 200 and one result per element, in order:
 * `{"results":[{"index":0,"id":"a","status":200,"event":{...}},{"index":1,"status":400,"error":{...}}]}`.
 */
export function encodeBatchReply(results: readonly BatchResult[]): Reply {
  return jsonReply(200, { results });
}
