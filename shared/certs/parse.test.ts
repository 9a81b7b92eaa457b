import { describe, expect, it } from '@jest/globals';
import { X509Certificate } from 'node:crypto';
import { DerDecodeError } from './errors.js';
import { keyIdentifier, parseCertificate } from './parse.js';
import { issueCertificate } from './x509.js';

describe('parseCertificate', () => {
  it('reads validity, names and the key identifier of an issued certificate', () => {
    const notBefore = new Date('2030-01-01T00:00:00Z');
    const notAfter = new Date('2060-06-01T12:00:00Z');
    const ca = issueCertificate({ commonName: 'ca', organizations: ['virt'], usage: 'ca', notBefore, notAfter });
    const fields = parseCertificate(new X509Certificate(ca.certPem).raw);
    expect([fields.notBefore, fields.notAfter]).toEqual([notBefore, notAfter]);
    expect(fields.issuer.equals(fields.subject)).toBe(true);
    expect(fields.subjectKeyId?.equals(keyIdentifier(fields.publicKey))).toBe(true);
    expect(fields.subjectKeyId).toHaveLength(20);
  });

  it.each([
    ['an INTEGER', '020101'],
    ['a truncated SEQUENCE', '3082ffff3003'],
    ['an empty buffer', ''],
  ])('refuses %s with DerDecodeError (code DER_INVALID)', (_what, hex) => {
    const run = (): unknown => parseCertificate(Buffer.from(hex, 'hex'));
    expect(run).toThrow(DerDecodeError);
    expect(run).toThrow(/^certificate: /);
    expect(run).toThrow(expect.objectContaining({ code: 'DER_INVALID' }));
  });
});
