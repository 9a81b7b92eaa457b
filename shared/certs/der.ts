/**
 * A minimal ASN.1 DER encoder (X.690), just enough for X.509 certificates, and a TLV reader to walk
 * existing DER. Every encoder is a pure function returning the complete TLV as a Buffer.
 */
import { DerDecodeError } from './errors.js';

/** Universal tags used here (X.680). */
export const Tag = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** The length octets: short form below 128, else 0x80|n followed by n big-endian octets. */
export function encodeLength(length: number): Buffer {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`DER length ${length} is not a natural number`);
  if (length < 0x80) return Buffer.from([length]);
  const octets: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) octets.unshift(n % 256);
  return Buffer.from([0x80 | octets.length, ...octets]);
}

/** One TLV with a single-octet tag (tag numbers up to 30, which is all X.509 needs). */
export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

export function sequence(...items: Buffer[]): Buffer {
  return tlv(Tag.sequence, Buffer.concat(items));
}

/** A SET OF: DER orders the encoded elements as octet strings. */
export function set(...items: Buffer[]): Buffer {
  return tlv(Tag.set, Buffer.concat([...items].sort((a, b) => Buffer.compare(a, b))));
}

/**
 * A non-negative INTEGER from a bigint or from big-endian unsigned magnitude bytes: leading zero octets
 * are dropped, and one 0x00 is prepended when the first octet has its high bit set (else it would read
 * as negative).
 */
export function integer(value: bigint | Buffer): Buffer {
  let bytes: Buffer;
  if (typeof value === 'bigint') {
    if (value < 0n) throw new RangeError('negative INTEGERs are not supported');
    const hex = value.toString(16);
    bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  } else {
    bytes = value;
  }
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start += 1;
  bytes = bytes.length === 0 ? Buffer.from([0]) : bytes.subarray(start);
  if ((bytes[0] ?? 0) & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(Tag.integer, bytes);
}

/** An OBJECT IDENTIFIER from its dotted form: first two arcs as 40*a+b, each arc base-128. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((a) => {
    if (!/^\d+$/.test(a)) throw new RangeError(`OID ${dotted} has a non-numeric arc`);
    return BigInt(a);
  });
  const [first, second, ...rest] = arcs;
  if (first === undefined || second === undefined || first > 2n || (first < 2n && second > 39n)) {
    throw new RangeError(`OID ${dotted} is not valid`);
  }
  const octets: number[] = [];
  for (const arc of [first * 40n + second, ...rest]) {
    const groups: number[] = [];
    for (let n = arc; ; n >>= 7n) {
      groups.unshift(Number(n & 0x7fn) | (groups.length ? 0x80 : 0));
      if (n < 0x80n) break;
    }
    octets.push(...groups);
  }
  return tlv(Tag.oid, Buffer.from(octets));
}

export function utf8String(text: string): Buffer {
  return tlv(Tag.utf8String, Buffer.from(text, 'utf8'));
}

export function ia5String(text: string): Buffer {
  if ([...text].some((c) => c.charCodeAt(0) > 0x7f)) throw new RangeError('IA5String takes ASCII only');
  return tlv(Tag.ia5String, Buffer.from(text, 'ascii'));
}

/** A BIT STRING: the first content octet counts the unused bits of the last octet. */
export function bitString(bytes: Buffer, unusedBits = 0): Buffer {
  if (unusedBits < 0 || unusedBits > 7 || (unusedBits > 0 && bytes.length === 0)) {
    throw new RangeError(`BIT STRING cannot have ${unusedBits} unused bits`);
  }
  return tlv(Tag.bitString, Buffer.concat([Buffer.from([unusedBits]), bytes]));
}

/** A named-bit BIT STRING (such as KeyUsage) with bit 0 the most significant; DER drops trailing zeros. */
export function namedBits(bits: readonly number[]): Buffer {
  if (bits.length === 0) return bitString(Buffer.alloc(0));
  const highest = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const bit of bits) bytes[Math.floor(bit / 8)] |= 0x80 >> (bit % 8);
  return bitString(bytes, 7 - (highest % 8));
}

export function octetString(bytes: Buffer): Buffer {
  return tlv(Tag.octetString, bytes);
}

export function boolean(value: boolean): Buffer {
  return tlv(Tag.boolean, Buffer.from([value ? 0xff : 0x00]));
}

function digits(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function timeBody(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new RangeError('invalid Date');
  const d = date;
  return `${digits(d.getUTCMonth() + 1, 2)}${digits(d.getUTCDate(), 2)}${digits(d.getUTCHours(), 2)}${digits(d.getUTCMinutes(), 2)}${digits(d.getUTCSeconds(), 2)}Z`;
}

/** UTCTime YYMMDDHHMMSSZ (seconds precision; milliseconds are dropped). Years 1950 to 2049 only. */
export function utcTime(date: Date): Buffer {
  const year = date.getUTCFullYear();
  if (!(year >= 1950 && year < 2050)) throw new RangeError(`UTCTime cannot hold the year ${year}`);
  return tlv(Tag.utcTime, Buffer.from(`${digits(year % 100, 2)}${timeBody(date)}`, 'ascii'));
}

/** GeneralizedTime YYYYMMDDHHMMSSZ without fractions, as RFC 5280 requires. */
export function generalizedTime(date: Date): Buffer {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) throw new RangeError(`GeneralizedTime cannot hold the year ${year}`);
  return tlv(Tag.generalizedTime, Buffer.from(`${digits(year, 4)}${timeBody(date)}`, 'ascii'));
}

/** An X.509 Time (RFC 5280 4.1.2.5): UTCTime from 1950 through 2049, GeneralizedTime otherwise. */
export function time(date: Date): Buffer {
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050 ? utcTime(date) : generalizedTime(date);
}

function contextTag(n: number, constructed: boolean): number {
  if (!Number.isInteger(n) || n < 0 || n > 30) throw new RangeError(`context tag [${n}] is out of range`);
  return 0x80 | (constructed ? 0x20 : 0) | n;
}

/** [n] EXPLICIT: a constructed context-specific TLV wrapping the whole inner encoding. */
export function explicit(n: number, inner: Buffer): Buffer {
  return tlv(contextTag(n, true), inner);
}

/**
 * [n] IMPLICIT: the inner TLV's tag is replaced by the context-specific one, keeping its content and
 * its primitive/constructed bit (so `implicit(2, ia5String('a'))` is a dNSName).
 */
export function implicit(n: number, inner: Buffer): Buffer {
  const { tag, content } = readTlv(inner);
  return tlv(contextTag(n, (tag & 0x20) !== 0), content);
}

/** One decoded TLV: where it sits in the input, its tag, and views of its content and whole encoding. */
export interface Tlv {
  tag: number;
  /** Offset of the tag octet in the input. */
  start: number;
  /** Offset just past the content. */
  end: number;
  content: Buffer;
  /** The whole encoding, tag to end of content. */
  raw: Buffer;
}

/** Read the TLV at `offset`; throws DerDecodeError on truncation, indefinite or oversized lengths. */
export function readTlv(input: Buffer, offset = 0): Tlv {
  const fail = (what: string): never => {
    throw new DerDecodeError(`DER at offset ${offset}: ${what}`);
  };
  const tag = input[offset] ?? fail('truncated before the tag');
  if ((tag & 0x1f) === 0x1f) fail('multi-octet tags are not supported');
  const first = input[offset + 1] ?? fail('truncated before the length');
  let length = first;
  let header = 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0) fail('indefinite length is not DER');
    if (count > 4) fail(`length of ${count} octets is too large`);
    length = 0;
    for (let i = 0; i < count; i += 1) length = length * 256 + (input[offset + 2 + i] ?? fail('truncated length'));
    header += count;
  }
  const end = offset + header + length;
  if (end > input.length) fail(`content of ${length} octets runs past the end of the input`);
  return { tag, start: offset, end, content: input.subarray(offset + header, end), raw: input.subarray(offset, end) };
}

/** Every TLV laid end to end in `input` (the content of a SEQUENCE or SET). */
export function readAll(input: Buffer): Tlv[] {
  const items: Tlv[] = [];
  for (let offset = 0; offset < input.length;) {
    const item = readTlv(input, offset);
    items.push(item);
    offset = item.end;
  }
  return items;
}

/** Decode a UTCTime or GeneralizedTime TLV in the RFC 5280 form (seconds, `Z`, no fractions). */
export function readTime(item: Tlv): Date {
  const text = item.content.toString('latin1');
  const utc = item.tag === Tag.utcTime && /^(\d{2})(\d{10})Z$/.exec(text);
  const general = item.tag === Tag.generalizedTime && /^(\d{4})(\d{10})Z$/.exec(text);
  const match = utc || general;
  if (!match) throw new DerDecodeError(`not an RFC 5280 time: tag 0x${item.tag.toString(16)} "${text}"`);
  let year = Number(match[1]);
  if (utc) year += year >= 50 ? 1900 : 2000;
  const rest = match[2] ?? '';
  const [mo, d, h, mi, s] = [0, 2, 4, 6, 8].map((i) => Number(rest.slice(i, i + 2))) as [number, number, number, number, number];
  const date = new Date(Date.UTC(year, mo - 1, d, h, mi, s));
  date.setUTCFullYear(year); // Date.UTC maps the years 0-99 to 1900-1999
  if (`${rest}Z` !== timeBody(date)) throw new DerDecodeError(`no such time: "${text}"`);
  return date;
}
