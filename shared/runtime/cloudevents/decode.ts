import type { IncomingHttpHeaders } from 'node:http';
import { CONSTANTS, HTTP, type CloudEvent } from 'cloudevents';
import { BadRequestError } from '../../errors/index.js';
import { isJsonMediaType, jsonKind, mediaType, parseJson } from '../http/json.js';
import { checkAttributes, REQUIRED_ATTRIBUTES, sdkEvent } from './validate.js';

/** An HTTP request as the codec sees it: headers (lower-case names) and the whole body. */
export interface RawMessage {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export type SingleMode = 'binary' | 'structured';

export type BatchItem =
  { readonly ok: true; readonly event: CloudEvent<unknown> } | { readonly ok: false; readonly id: string | undefined; readonly error: BadRequestError };

export type Decoded = { readonly mode: SingleMode; readonly event: CloudEvent<unknown> } | { readonly mode: 'batch'; readonly items: readonly BatchItem[] };

const REQUIRED_HEADERS = REQUIRED_ATTRIBUTES.map((a) => `ce-${a}`);

/**
 * Decode an HTTP request into CloudEvents (HTTP protocol binding, binary, structured and batched
 * modes). Whole-request problems throw BadRequestError naming the problem; in batched mode each
 * element is decoded on its own, so one broken element does not fail the others.
 */
export function decodeCloudEvents(message: RawMessage): Decoded {
  const type = mediaType(message.headers['content-type']);
  if (type === CONSTANTS.MIME_CE_BATCH) return { mode: 'batch', items: decodeBatch(message.body) };
  if (type.startsWith(CONSTANTS.MIME_CE)) return { mode: 'structured', event: decodeStructured(type, message.body) };
  if (REQUIRED_HEADERS.some((h) => message.headers[h] !== undefined)) {
    return { mode: 'binary', event: decodeBinary(message) };
  }
  throw new BadRequestError(
    `not a CloudEvent: expected the headers ${REQUIRED_HEADERS.join(', ')} (binary mode) or Content-Type ` +
      `${CONSTANTS.MIME_CE_JSON} (structured) or ${CONSTANTS.MIME_CE_BATCH} (batched); ` +
      `got Content-Type "${type || 'none'}" and no ce- headers`,
  );
}

function decodeBinary({ headers, body }: RawMessage): CloudEvent<unknown> {
  checkAttributes({ what: 'binary-mode CloudEvent', get: (a) => headers[`ce-${a}`], spell: (a) => `ce-${a}` });
  const data = decodeData(headers['content-type'], body);
  return sdkEvent(() => {
    // The SDK parses the attributes; the data is decoded above so that every JSON media type works.
    const attributes = HTTP.toEvent({ headers, body: undefined }) as CloudEvent<unknown>;
    return data === undefined ? attributes : attributes.cloneWith({ data }, false);
  });
}

function decodeData(contentType: string | undefined, body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const type = mediaType(contentType);
  if (type === '' || isJsonMediaType(type)) {
    return parseJson(body.toString('utf8'), `CloudEvent data (Content-Type ${type || 'unset, read as JSON'})`);
  }
  return type.startsWith('text/') ? body.toString('utf8') : body;
}

function decodeStructured(type: string, body: Buffer): CloudEvent<unknown> {
  if (type !== CONSTANTS.MIME_CE_JSON) {
    throw new BadRequestError(`unsupported structured CloudEvent format "${type}"; only ${CONSTANTS.MIME_CE_JSON} is accepted`);
  }
  return decodeEventObject(parseJson(body.toString('utf8'), 'structured CloudEvent body'), 'structured CloudEvent');
}

function decodeBatch(body: Buffer): BatchItem[] {
  const value = parseJson(body.toString('utf8'), 'batched CloudEvents body');
  if (!Array.isArray(value)) {
    throw new BadRequestError(`batched CloudEvents body must be a JSON array, got ${jsonKind(value)}`);
  }
  return value.map((element: unknown, index): BatchItem => {
    try {
      return { ok: true, event: decodeEventObject(element, `batch element ${index}`) };
    } catch (err: unknown) {
      if (!(err instanceof BadRequestError)) throw err;
      return { ok: false, id: idOf(element), error: err };
    }
  });
}

function decodeEventObject(value: unknown, what: string): CloudEvent<unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BadRequestError(`${what} must be a JSON object, got ${jsonKind(value)}`);
  }
  const attributes = value as Record<string, unknown>;
  checkAttributes({ what, get: (a) => attributes[a], spell: (a) => a });
  const headers = { 'content-type': CONSTANTS.MIME_CE_JSON };
  return sdkEvent(() => HTTP.toEvent({ headers, body: attributes }) as CloudEvent<unknown>);
}

function idOf(element: unknown): string | undefined {
  if (element === null || typeof element !== 'object') return undefined;
  const id = (element as Record<string, unknown>)['id'];
  return typeof id === 'string' ? id : undefined;
}
