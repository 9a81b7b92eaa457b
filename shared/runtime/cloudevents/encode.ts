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

/** Answer a single event in the mode it came in; no reply event gives 204. */
export function encodeReply(mode: SingleMode, event: CloudEvent<unknown> | void): Reply {
  if (event === undefined) return { status: 204, headers: {}, body: undefined };
  const message = mode === 'binary' ? HTTP.binary(event) : HTTP.structured(event);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) headers[name] = String(value);
  }
  return { status: 200, headers, body: bodyBytes(message.body) };
}

/**
 * Answer a batch with 200 and one result per element, in order:
 * `{"results":[{"index":0,"id":"a","status":200,"event":{...}},{"index":1,"status":400,"error":{...}}]}`.
 */
export function encodeBatchReply(results: readonly BatchResult[]): Reply {
  return jsonReply(200, { results });
}

function bodyBytes(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return JSON.stringify(body);
}
