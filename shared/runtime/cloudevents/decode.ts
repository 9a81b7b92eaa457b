import type { IncomingHttpHeaders } from 'node:http';
import { HTTP, ValidationError, type CloudEvent } from 'cloudevents';
import { BadRequestError, errorMessage } from '../../errors/index.js';
import { isJsonMediaType, jsonKind, mediaType, parseJson } from '../http/json.js';

/** An HTTP request as the codec sees it: headers (lower-case names) and the whole body. */
export interface RawMessage {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export type SingleMode = 'binary' | 'structured';

export type BatchItem =
  { readonly ok: true; readonly event: CloudEvent<unknown> } | { readonly ok: false; readonly id: string | undefined; readonly error: BadRequestError };

export type Decoded = { readonly mode: SingleMode; readonly event: CloudEvent<unknown> } | { readonly mode: 'batch'; readonly items: readonly BatchItem[] };

/** The media types of the JSON event format (structured) and of its batches. */
export const MIME_CE = 'application/cloudevents';
export const MIME_CE_JSON = 'application/cloudevents+json';
export const MIME_CE_BATCH = 'application/cloudevents-batch+json';

/**
 * Decode an HTTP request into CloudEvents with the SDK (`HTTP.toEvent`, then `validate()`): binary,
 * structured and batched modes. What the SDK throws becomes a BadRequestError naming the problem. A
 * batch is split here and each element decoded by the SDK on its own, so one broken element does not
 * fail the others.
 */
export function decodeCloudEvents(message: RawMessage): Decoded {
  const type = mediaType(message.headers['content-type']);
  if (type === MIME_CE_BATCH) return { mode: 'batch', items: decodeBatch(message.body) };
  const structured = type.startsWith(MIME_CE);
  const what = structured ? 'structured CloudEvent' : 'binary-mode CloudEvent';
  if (structured && message.body.length === 0) throw new BadRequestError(`${what} body is empty; expected JSON`);
  const body = structured || type === '' || isJsonMediaType(type) || type.startsWith('text/') ? message.body.toString('utf8') : message.body;
  return { mode: structured ? 'structured' : 'binary', event: toEvent(message.headers, message.body.length === 0 ? undefined : body, what) };
}

function decodeBatch(body: Buffer): BatchItem[] {
  const value = parseJson(body.toString('utf8'), 'batched CloudEvents body');
  if (!Array.isArray(value)) throw new BadRequestError(`batched CloudEvents body must be a JSON array, got ${jsonKind(value)}`);
  return value.map((element: unknown, index): BatchItem => {
    const what = `batch element ${index}`;
    try {
      if (element === null || typeof element !== 'object' || Array.isArray(element)) {
        throw new BadRequestError(`${what} must be a JSON object, got ${jsonKind(element)}`);
      }
      return { ok: true, event: toEvent(STRUCTURED_HEADERS, JSON.stringify(element), what) };
    } catch (err: unknown) {
      if (!(err instanceof BadRequestError)) throw err;
      return { ok: false, id: idOf(element), error: err };
    }
  });
}

/** What the SDK says when a message is in no mode it knows (no ce-id, no CloudEvents Content-Type). */
const NOT_DETECTED = 'no cloud event detected';

const STRUCTURED_HEADERS: IncomingHttpHeaders = { 'content-type': MIME_CE_JSON };

/** One event by the SDK, validated; anything it throws on the input is a 400 naming `what`. */
function toEvent(headers: IncomingHttpHeaders, body: string | Buffer | undefined, what: string): CloudEvent<unknown> {
  try {
    // The SDK builds CloudEvent instances; its declaration says only the plain CloudEventV1 shape.
    const decoded = HTTP.toEvent<unknown>({ headers, body }) as CloudEvent<unknown> | Array<CloudEvent<unknown>>;
    if (Array.isArray(decoded)) throw new BadRequestError(`${what}: a batch where one event was expected`);
    decoded.validate();
    return decoded;
  } catch (err: unknown) {
    if (err instanceof BadRequestError) throw err;
    if (err instanceof SyntaxError) throw new BadRequestError(`${what} is not valid JSON: ${err.message}`, { cause: err });
    if (err instanceof ValidationError && err.message === NOT_DETECTED) {
      throw new BadRequestError(
        `not a CloudEvent: expected a ce-id header (binary mode) or Content-Type ${MIME_CE_JSON} (structured) or ${MIME_CE_BATCH} ` +
          `(batched); got Content-Type "${mediaType(headers['content-type']) || 'none'}" and no ce-id`,
        { cause: err },
      );
    }
    if (err instanceof ValidationError) throw new BadRequestError(`invalid ${what}: ${validationMessage(err)}`, { cause: err });
    throw new BadRequestError(`not a CloudEvent (${what}): ${errorMessage(err)}`, { cause: err });
  }
}

/** The SDK's message with its schema errors, if any (`/source: must match format "uri-reference"`). */
function validationMessage(err: ValidationError): string {
  const details = (err.errors ?? []).map((e) => (typeof e === 'string' ? e : `${e.instancePath || '(event)'}: ${e.message ?? e.keyword}`));
  return [err.message.split('\n')[0]?.trim(), ...details].filter(Boolean).join('; ');
}

function idOf(element: unknown): string | undefined {
  if (element === null || typeof element !== 'object') return undefined;
  const id = (element as Record<string, unknown>)['id'];
  return typeof id === 'string' ? id : undefined;
}
