import type { IncomingHttpHeaders } from 'node:http';
import type { CloudEvent } from 'cloudevents';
import { BadRequestError } from '../../errors/index.js';
import { isJsonMediaType, jsonKind, mediaType, parseJson } from '../http/json.js';
import { decodeHeaderValue } from './header-value.js';
import { REQUIRED_ATTRIBUTES, validEvent } from './validate.js';

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

const CE_PREFIX = 'ce-';
const REQUIRED_HEADERS = REQUIRED_ATTRIBUTES.map((a) => `${CE_PREFIX}${a}`);
const BINARY_NAMING = { what: 'binary-mode CloudEvent', spell: (a: string): string => `${CE_PREFIX}${a}` };
const attributeName = (a: string): string => a;

/**
 * Decode an HTTP request into CloudEvents (HTTP protocol binding 1.0.2: binary, structured and
 * batched modes), with our own parsing and checks (validate.ts) rather than the SDK's. Whole-request
 * problems throw BadRequestError naming the problem; in batched mode each element is decoded on its
 * own, so one broken element does not fail the others.
 */
export function decodeCloudEvents(message: RawMessage): Decoded {
  const type = mediaType(message.headers['content-type']);
  if (type === MIME_CE_BATCH) return { mode: 'batch', items: decodeBatch(message.body) };
  if (type.startsWith(MIME_CE)) return { mode: 'structured', event: decodeStructured(type, message.body) };
  if (REQUIRED_HEADERS.some((h) => message.headers[h] !== undefined)) {
    return { mode: 'binary', event: decodeBinary(message) };
  }
  throw new BadRequestError(
    `not a CloudEvent: expected the headers ${REQUIRED_HEADERS.join(', ')} (binary mode) or Content-Type ` +
      `${MIME_CE_JSON} (structured) or ${MIME_CE_BATCH} (batched); ` +
      `got Content-Type "${type || 'none'}" and no ce- headers`,
  );
}

/**
 * Binary mode: every `ce-` header is an attribute (its value percent-decoded), Content-Type is
 * `datacontenttype`, the body is the data.
 */
function decodeBinary({ headers, body }: RawMessage): CloudEvent<unknown> {
  const attributes: Record<string, unknown> = {};
  const contentType = headers['content-type'];
  for (const header in headers) {
    if (!header.startsWith(CE_PREFIX)) continue;
    const value = headers[header];
    if (typeof value !== 'string') continue;
    const name = header.slice(CE_PREFIX.length);
    if (name === 'datacontenttype') {
      throw new BadRequestError(`binary-mode CloudEvent carries ce-datacontenttype; its content type is the Content-Type header`);
    }
    if (name !== 'data') attributes[name] = decodeHeaderValue(header, value);
  }
  if (contentType !== undefined) attributes['datacontenttype'] = contentType;
  const data = decodeData(contentType, body);
  if (data !== undefined) attributes['data'] = data;
  return validEvent(attributes, BINARY_NAMING);
}

/** Any JSON media type (or none) parsed, `text/*` as a string, anything else as bytes. */
function decodeData(contentType: string | undefined, body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const type = mediaType(contentType);
  if (type === '' || isJsonMediaType(type)) {
    return parseJson(body.toString('utf8'), `CloudEvent data (Content-Type ${type || 'unset, read as JSON'})`);
  }
  return type.startsWith('text/') ? body.toString('utf8') : body;
}

function decodeStructured(type: string, body: Buffer): CloudEvent<unknown> {
  if (type !== MIME_CE_JSON) {
    throw new BadRequestError(`unsupported structured CloudEvent format "${type}"; only ${MIME_CE_JSON} is accepted`);
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

/**
 * One event of the JSON event format: its members are the attributes; `data` is the data as JSON,
 * `data_base64` the data as base64 bytes (handed to the handler as a Buffer). A context attribute
 * set to null counts as absent.
 */
function decodeEventObject(value: unknown, what: string): CloudEvent<unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BadRequestError(`${what} must be a JSON object, got ${jsonKind(value)}`);
  }
  const attributes: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value as Record<string, unknown>)) {
    if (member === null && name !== 'data') continue;
    attributes[name] = member;
  }
  const base64 = attributes['data_base64'];
  if (base64 !== undefined) {
    if (typeof base64 !== 'string') throw new BadRequestError(`invalid CloudEvent: data_base64 must be string`);
    if (attributes['data'] !== undefined) throw new BadRequestError(`${what} has both data and data_base64; at most one is allowed`);
    delete attributes['data_base64'];
    attributes['data'] = Buffer.from(base64, 'base64');
  }
  return validEvent(attributes, { what, spell: attributeName });
}

function idOf(element: unknown): string | undefined {
  if (element === null || typeof element !== 'object') return undefined;
  const id = (element as Record<string, unknown>)['id'];
  return typeof id === 'string' ? id : undefined;
}
