import { describe, expect, it } from '@jest/globals';
import {
  bitString,
  boolean,
  encodeLength,
  explicit,
  generalizedTime,
  ia5String,
  implicit,
  integer,
  namedBits,
  octetString,
  oid,
  readAll,
  readTime,
  readTlv,
  sequence,
  set,
  time,
  utcTime,
  utf8String,
} from './der.js';
import { DerDecodeError } from './errors.js';

const hex = (b: Buffer): string => b.toString('hex');

describe('DER encoder', () => {
  it('encodes INTEGERs minimally and prepends 0x00 when the high bit is set', () => {
    expect(hex(integer(0n))).toBe('020100');
    expect(hex(integer(127n))).toBe('02017f');
    expect(hex(integer(128n))).toBe('02020080');
    expect(hex(integer(256n))).toBe('02020100');
    expect(hex(integer(2n ** 64n))).toBe('0209010000000000000000');
    expect(hex(integer(Buffer.from('0000ff', 'hex')))).toBe('020200ff');
    expect(hex(integer(Buffer.from('00000001', 'hex')))).toBe('020101');
    expect(hex(integer(Buffer.alloc(0)))).toBe('020100');
    expect(() => integer(-1n)).toThrow(RangeError);
  });

  it('uses the short length form below 128 and 0x81/0x82 long forms above', () => {
    expect(hex(encodeLength(0))).toBe('00');
    expect(hex(encodeLength(127))).toBe('7f');
    expect(hex(encodeLength(128))).toBe('8180');
    expect(hex(encodeLength(255))).toBe('81ff');
    expect(hex(encodeLength(256))).toBe('820100');
    expect(hex(encodeLength(65535))).toBe('82ffff');
    expect(hex(encodeLength(65536))).toBe('83010000');
    expect(hex(octetString(Buffer.alloc(200))).slice(0, 6)).toBe('0481c8');
    expect(hex(octetString(Buffer.alloc(300))).slice(0, 8)).toBe('0482012c');
  });

  it('encodes OIDs with the first two arcs combined and base-128 continuation octets', () => {
    expect(hex(oid('1.2.840.10045.4.3.2'))).toBe('06082a8648ce3d040302');
    expect(hex(oid('2.5.29.17'))).toBe('0603551d11');
    expect(hex(oid('1.2.840.113549.1.1.11'))).toBe('06092a864886f70d01010b');
    expect(hex(oid('2.999.3'))).toBe('0603883703');
    expect(() => oid('1')).toThrow(RangeError);
    expect(() => oid('1.40')).toThrow(RangeError);
    expect(() => oid('1.2.x')).toThrow(RangeError);
  });

  it('encodes strings, booleans, bit strings and named bits', () => {
    expect(hex(utf8String('ö'))).toBe('0c02c3b6');
    expect(hex(ia5String('a.b'))).toBe('1603612e62');
    expect(() => ia5String('ö')).toThrow(RangeError);
    expect(hex(boolean(true))).toBe('0101ff');
    expect(hex(boolean(false))).toBe('010100');
    expect(hex(bitString(Buffer.from([0xab])))).toBe('030200ab');
    expect(hex(namedBits([0, 5, 6]))).toBe('03020186'); // keyUsage of a CA: bit 6 is the last, 1 unused bit
    expect(hex(namedBits([0, 2]))).toBe('030205a0'); // digitalSignature + keyEncipherment
    expect(hex(namedBits([8]))).toBe('0303070080');
    expect(hex(namedBits([]))).toBe('030100');
  });

  it('switches from UTCTime to GeneralizedTime at 2050 and drops milliseconds', () => {
    expect(time(new Date('2049-12-31T23:59:59.999Z')).toString('latin1')).toBe('\x17\x0d491231235959Z');
    expect(time(new Date('2050-01-01T00:00:00Z')).toString('latin1')).toBe('\x18\x0f20500101000000Z');
    expect(time(new Date('1950-01-01T00:00:00Z')).toString('latin1')).toBe('\x17\x0d500101000000Z');
    expect(time(new Date('1949-12-31T23:59:59Z')).toString('latin1')).toBe('\x18\x0f19491231235959Z');
    expect(() => utcTime(new Date('2050-01-01T00:00:00Z'))).toThrow(RangeError);
    expect(() => generalizedTime(new Date('+010000-01-01T00:00:00Z'))).toThrow(RangeError);
    expect(() => time(new Date(Number.NaN))).toThrow(RangeError);
  });

  it('wraps explicit tags around and replaces the tag for implicit ones', () => {
    expect(hex(explicit(0, integer(2n)))).toBe('a003020102');
    expect(hex(explicit(3, sequence()))).toBe('a3023000');
    expect(hex(implicit(2, ia5String('a')))).toBe('820161');
    expect(hex(implicit(7, octetString(Buffer.from([127, 0, 0, 1]))))).toBe('87047f000001');
    expect(hex(implicit(1, sequence(integer(1n))))).toBe('a103020101');
    expect(() => explicit(31, sequence())).toThrow(RangeError);
  });

  it('sorts the elements of a SET by their encoding', () => {
    expect(hex(set(integer(2n), integer(1n)))).toBe('3106020101020102');
    expect(hex(sequence(integer(2n), integer(1n)))).toBe('3006020102020101');
  });
});

describe('DER reader', () => {
  it('reads back what the encoder wrote, long lengths included', () => {
    const big = octetString(Buffer.alloc(300, 7));
    const item = readTlv(sequence(big, boolean(true)));
    expect(item.tag).toBe(0x30);
    const [first, second] = readAll(item.content);
    expect(first?.content.length).toBe(300);
    expect(first?.raw.equals(big)).toBe(true);
    expect(hex(second?.raw ?? Buffer.alloc(0))).toBe('0101ff');
  });

  it('refuses truncated input, indefinite lengths and multi-octet tags', () => {
    const bad = ['', '30', '3005020101', '3080', '1f0100', '308500000000010000', '3082'];
    for (const b of bad) expect(() => readTlv(Buffer.from(b, 'hex'))).toThrow(DerDecodeError);
  });

  it('decodes both time forms, with UTCTime years 50-99 in the 1900s', () => {
    const iso = (d: Date): string => readTime(readTlv(time(d))).toISOString();
    for (const at of ['2049-12-31T23:59:59.000Z', '2050-01-01T00:00:00.000Z', '1950-06-01T12:00:00.000Z', '0099-01-01T00:00:00.000Z']) {
      expect(iso(new Date(at))).toBe(at);
    }
    expect(() => readTime(readTlv(Buffer.from('\x17\x0d491331235959Z', 'latin1')))).toThrow(DerDecodeError);
    expect(() => readTime(readTlv(Buffer.from('\x17\x0b4912312359Z', 'latin1')))).toThrow(DerDecodeError);
    expect(() => readTime(readTlv(utf8String('491231235959Z')))).toThrow(DerDecodeError);
  });
});
