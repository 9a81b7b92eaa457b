/**
 * Decoding of the three input shapes into audit events, one result per element:
 * - Vector's `http` sink: a JSON array (or NDJSON) of log events whose `message` holds one audit line;
 * - CloudEvents whose data is an audit Event or an EventList (or, in binary mode, a Vector batch);
 * - the apiserver audit webhook: an `audit.k8s.io/v1` EventList.
 * A broken element never hides the others: it becomes a rejection with a stable reason.
 */
import { formatPath } from '../../shared/config/index.js';
import { AUDIT_API_VERSION, auditEventSchema, type AuditEvent } from './event.js';

/** Stable reasons for rejecting one element (used as a metric label). */
export type RejectReason = 'line_too_large' | 'invalid_json' | 'missing_message' | 'unknown_shape' | 'invalid_audit_event';

export interface Accepted {
  readonly ok: true;
  readonly index: number;
  readonly event: AuditEvent;
}

export interface Rejected {
  readonly ok: false;
  readonly index: number;
  readonly reason: RejectReason;
  /** A short human-readable explanation; never the element's content. */
  readonly detail: string;
}

export type ElementResult = Accepted | Rejected;

export interface DecodeLimits {
  /** Largest audit line (or NDJSON line) accepted, in bytes. */
  readonly maxLineBytes: number;
}

/** 4 MiB, the largest audit line the original accepts. */
export const DEFAULT_LIMITS: DecodeLimits = Object.freeze({ maxLineBytes: 4 * 1024 * 1024 });

const MAX_DETAIL = 200;

function reject(index: number, reason: RejectReason, detail: string): Rejected {
  return { ok: false, index, reason, detail: detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** UTF-8 size of a string, computed only when the cheap bound does not already decide. */
function tooLarge(text: string, limits: DecodeLimits): boolean {
  if (text.length * 3 <= limits.maxLineBytes) return false;
  return Buffer.byteLength(text, 'utf8') > limits.maxLineBytes;
}

/**
 * JSON.parse, answering only whether the text is JSON: the engine's message is no stable interface and
 * may quote the input, and audit lines can carry sensitive request data, so callers say where (which
 * line, which message), never why.
 */
function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err: unknown) {
    if (!(err instanceof SyntaxError)) throw err;
    return undefined;
  }
}

/** Validate one object as an audit Event. */
export function decodeEvent(value: unknown, index: number): ElementResult {
  if (!isRecord(value)) return reject(index, 'unknown_shape', 'an audit event must be a JSON object');
  if (value['kind'] !== undefined && value['kind'] !== 'Event') {
    return reject(index, 'unknown_shape', `kind ${JSON.stringify(value['kind'])} is not an audit Event`);
  }
  if (value['apiVersion'] !== undefined && value['apiVersion'] !== AUDIT_API_VERSION) {
    return reject(index, 'unknown_shape', `apiVersion ${JSON.stringify(value['apiVersion'])} is not ${AUDIT_API_VERSION}`);
  }
  const parsed = auditEventSchema.safeParse(value);
  if (parsed.success) return { ok: true, index, event: parsed.data };
  const problems = parsed.error.issues.map((i) => `${formatPath(i.path) || '(root)'}: ${i.message}`);
  return reject(index, 'invalid_audit_event', problems.join('; '));
}

function looksLikeEvent(value: Record<string, unknown>): boolean {
  return value['kind'] === 'Event' || 'auditID' in value;
}

/** One element of a batch: a Vector log event (`message` = audit line) or an audit Event itself. */
export function decodeElement(value: unknown, index: number, limits: DecodeLimits = DEFAULT_LIMITS): ElementResult {
  if (!isRecord(value)) return reject(index, 'unknown_shape', 'an element must be a JSON object');
  if (!('message' in value)) {
    if (looksLikeEvent(value)) return decodeEvent(value, index);
    return reject(index, 'missing_message', 'neither a Vector event with a message nor an audit Event');
  }
  const message = value['message'];
  if (isRecord(message)) return decodeEvent(message, index);
  if (typeof message !== 'string') return reject(index, 'unknown_shape', 'message is neither a string nor an object');
  if (tooLarge(message, limits)) {
    return reject(index, 'line_too_large', `audit line exceeds ${limits.maxLineBytes} bytes`);
  }
  const parsed = parseJson(message);
  if (parsed === undefined) return reject(index, 'invalid_json', `invalid JSON in the message of element ${index}`);
  return decodeEvent(parsed.value, index);
}

/**
 * An already-parsed payload: an array of elements, an EventList, a single Event or a single Vector
 * event. Anything else is one rejected element.
 */
export function decodeValue(value: unknown, limits: DecodeLimits = DEFAULT_LIMITS): ElementResult[] {
  if (Array.isArray(value)) return value.map((el, i) => decodeElement(el, i, limits));
  if (isRecord(value) && value['kind'] === 'EventList') {
    const items = value['items'];
    if (items === undefined || items === null) return [];
    if (!Array.isArray(items)) return [reject(0, 'unknown_shape', 'EventList items is not an array')];
    return items.map((el, i) => decodeEvent(el, i));
  }
  return [decodeElement(value, 0, limits)];
}

/** Split NDJSON into lines, dropping blank ones; each line is one element. */
function decodeNdjson(text: string, limits: DecodeLimits): ElementResult[] {
  const out: ElementResult[] = [];
  let index = 0;
  for (const [n, raw] of text.split('\n').entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    const i = index++;
    if (tooLarge(line, limits)) {
      out.push(reject(i, 'line_too_large', `line ${n + 1} exceeds ${limits.maxLineBytes} bytes`));
      continue;
    }
    const parsed = parseJson(line);
    out.push(parsed === undefined ? reject(i, 'invalid_json', `invalid JSON on line ${n + 1}`) : decodeElement(parsed.value, i, limits));
  }
  return out;
}

/**
 * A raw HTTP body. A body that starts with `[` is one JSON array (a syntax error in it rejects the
 * whole body as one element, since no element boundary can be trusted); otherwise a body that parses
 * as one JSON value is that value (an EventList, an Event, one Vector event), and anything else is
 * NDJSON, one element per non-blank line.
 */
export function decodeBody(body: string | Uint8Array, limits: DecodeLimits = DEFAULT_LIMITS): ElementResult[] {
  const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (text.trimStart().startsWith('[')) {
    const parsed = parseJson(text);
    if (parsed === undefined) return [reject(0, 'invalid_json', 'invalid JSON in the array body')];
    return decodeValue(parsed.value, limits);
  }
  const whole = parseJson(text);
  if (whole !== undefined) return decodeValue(whole.value, limits);
  return decodeNdjson(text, limits);
}
