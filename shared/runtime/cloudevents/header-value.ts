import { BadRequestError } from '../../errors/index.js';

/**
 * Attribute values in `ce-` headers (HTTP protocol binding 1.0.2, 3.1.3.2): a sender percent-encodes
 * space, `"`, `%` and everything outside printable ASCII as UTF-8 bytes; a receiver first unescapes a
 * double-quoted value, then does one round of percent-decoding and rejects bytes that are not UTF-8.
 * Values with neither `%` nor a leading `"` (nearly all) are returned as they are.
 */
export function decodeHeaderValue(header: string, value: string): string {
  let text = value;
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) text = text.slice(1, -1).replace(/\\(.)/g, '$1');
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    throw new BadRequestError(`${header} ${JSON.stringify(value)} is not correctly percent-encoded UTF-8`);
  }
}

const NEEDS_ENCODING = /[^\x21\x23\x24\x26-\x7e]/;

/** The header form of an attribute value; the UTF-8 bytes of what must be encoded as upper-case `%XY`. */
export function encodeHeaderValue(value: string): string {
  if (!NEEDS_ENCODING.test(value)) return value;
  let out = '';
  for (const char of value) {
    if (!NEEDS_ENCODING.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
