import { CloudEvent } from 'cloudevents';
import { BadRequestError } from '../../errors/index.js';

/** The one CloudEvents version this host accepts (all Knative sources and brokers emit it). */
export const SPEC_VERSION = '1.0';

export const REQUIRED_ATTRIBUTES = ['id', 'source', 'type', 'specversion'] as const;

/** How the attributes are named in one mode's messages. */
export interface AttributeNaming {
  /** `binary-mode CloudEvent`, `batch element 3`... */
  readonly what: string;
  /** `ce-id` for headers, `id` for structured attributes. */
  readonly spell: (attribute: string) => string;
}

// RFC 3986 appendix A, written out: a URI-reference is a URI (scheme ":" hier-part) or a
// relative-ref (whose first path segment has no colon), each with an optional query and fragment.
const PCT = '%[0-9A-Fa-f]{2}';
const UNRESERVED_SUB = "A-Za-z0-9\\-._~!$&'()*+,;=";
const PCHAR = `(?:[${UNRESERVED_SUB}:@]|${PCT})`;
const PCHAR_NC = `(?:[${UNRESERVED_SUB}@]|${PCT})`;
const IP_LITERAL = `\\[(?:[0-9A-Fa-f:.]+|[vV][0-9A-Fa-f]+\\.[${UNRESERVED_SUB}:]+)\\]`;
const AUTHORITY = `(?:(?:[${UNRESERVED_SUB}:]|${PCT})*@)?(?:${IP_LITERAL}|(?:[${UNRESERVED_SUB}]|${PCT})*)(?::[0-9]*)?`;
const PATH_ABEMPTY = `(?:/${PCHAR}*)*`;
const TAIL = `(?:\\?(?:${PCHAR}|[/?])*)?(?:#(?:${PCHAR}|[/?])*)?`;
const HIER_PART = `(?://${AUTHORITY}${PATH_ABEMPTY}|/(?:${PCHAR}+${PATH_ABEMPTY})?|${PCHAR}+${PATH_ABEMPTY}|)`;
const RELATIVE_PART = `(?://${AUTHORITY}${PATH_ABEMPTY}|/(?:${PCHAR}+${PATH_ABEMPTY})?|${PCHAR_NC}+${PATH_ABEMPTY}|)`;
const SCHEME = '[A-Za-z][A-Za-z0-9+\\-.]*';
const URI = new RegExp(`^${SCHEME}:${HIER_PART}${TAIL}$`);
const URI_REFERENCE = new RegExp(`^(?:${SCHEME}:${HIER_PART}|${RELATIVE_PART})${TAIL}$`);

/** RFC 3339 `date-time`; the ranges (month, day of that month, hour...) are checked in `isRfc3339`. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** The attributes CloudEvents 1.0 defines besides the required ones; the rest are extensions. */
const OPTIONAL_STRINGS = ['datacontenttype', 'dataschema', 'subject'] as const;
const ATTRIBUTE_NAME = /^[a-z0-9]+$/;

/**
 * Check one event's attributes as the CloudEvents 1.0 spec and its JSON schema ask, and build the
 * event the handler receives. `attributes` holds the context attributes (strings from headers, any
 * JSON value in structured mode), `time` as sent, and `data` already decoded. Every problem is a
 * BadRequestError naming it: missing required attributes (all of them listed), a specversion other
 * than 1.0, a time that is not RFC 3339, a source that is not a URI reference, a dataschema that is
 * not a URI, an empty or non-string optional attribute, an attribute name outside `[a-z0-9]`.
 */
export function validEvent(attributes: Record<string, unknown>, { what, spell }: AttributeNaming): CloudEvent<unknown> {
  let missing: string[] | undefined;
  for (const name of REQUIRED_ATTRIBUTES) {
    const value = attributes[name];
    if (typeof value !== 'string' || value === '') (missing ??= []).push(spell(name));
  }
  if (missing !== undefined) throw new BadRequestError(`${what} is missing ${missing.join(', ')} (non-empty strings)`);
  const version = attributes['specversion'] as string;
  if (version !== SPEC_VERSION) {
    throw new BadRequestError(`unsupported CloudEvents specversion "${version}"; this host accepts ${SPEC_VERSION}`);
  }
  const time = attributes['time'];
  if (time !== undefined) {
    if (typeof time !== 'string' || !isRfc3339(time)) {
      throw new BadRequestError(`${what}: ${spell('time')} ${JSON.stringify(time)} is not an RFC 3339 timestamp`);
    }
    attributes['time'] = new Date(Date.parse(time)).toISOString();
  }
  if (!URI_REFERENCE.test(attributes['source'] as string)) invalid('source must match format "uri-reference"');
  for (const name of OPTIONAL_STRINGS) {
    const value = attributes[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') invalid(`${name} must be string`);
    if (value === '') invalid(`${name} must NOT have fewer than 1 characters`);
  }
  const schema = attributes['dataschema'];
  if (schema !== undefined && !URI.test(schema as string)) invalid('dataschema must match format "uri"');
  if (attributes['schemaurl'] !== undefined) invalid('cannot set schemaurl on version 1.0 event');
  for (const name in attributes) {
    if (!ATTRIBUTE_NAME.test(name) && name !== 'data_base64') invalid(`invalid attribute name: "${name}"`);
  }
  // Not strict: everything the SDK's schema validation would check was checked above.
  return new CloudEvent<unknown>(attributes, false);
}

function invalid(problem: string): never {
  throw new BadRequestError(`invalid CloudEvent: ${problem}`);
}

/** RFC 3339 `date-time` with a time zone, every field in its range (February 30 is not a date). */
export function isRfc3339(text: string): boolean {
  const m = RFC3339.exec(text);
  if (m === null) return false;
  const [year, month, day, hour, minute, second, offsetHour, offsetMinute] = m.slice(1).map(Number);
  if (month === undefined || month < 1 || month > 12 || day === undefined || day < 1) return false;
  if (day > new Date(Date.UTC(year ?? 0, month, 0)).getUTCDate()) return false;
  if ((hour ?? 0) > 23 || (minute ?? 0) > 59 || (second ?? 0) > 59) return false;
  if (m[7] !== undefined && ((offsetHour ?? 0) > 23 || (offsetMinute ?? 0) > 59)) return false;
  return !Number.isNaN(Date.parse(text));
}
