import { describe, expect, it } from '@jest/globals';
import { X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import { CertificateOptionsError } from './errors.js';
import { inspectPair, renewAt, type InspectInput } from './inspect.js';
import { generateKey, issueCertificate, toPem } from './x509.js';

const at = (iso: string): Date => new Date(iso);
const caKey = generateKey().privateKey;
const ca = issueCertificate({ commonName: 'virt-ca', usage: 'ca', key: caKey, notBefore: at('2030-01-01Z'), notAfter: at('2040-01-01Z') });
/** The same CA name and key with an earlier end: what a CA looked like before it was renewed in place. */
const oldCa = issueCertificate({ commonName: 'virt-ca', usage: 'ca', key: caKey, notBefore: at('2030-01-01Z'), notAfter: at('2031-01-01Z') });
const twin = issueCertificate({ commonName: 'virt-ca', usage: 'ca', notBefore: at('2030-01-01Z'), notAfter: at('2040-01-01Z') });
const stranger = issueCertificate({ commonName: 'other-ca', usage: 'ca', notBefore: at('2030-01-01Z'), notAfter: at('2040-01-01Z') });
const leafTimes = { notBefore: at('2030-06-01Z'), notAfter: at('2032-01-01Z') };
const pair = issueCertificate({ commonName: 'svc', dnsNames: ['svc.ns.svc'], ipAddresses: ['10.0.0.1'], usage: 'server', issuer: ca, ...leafTimes });
const now = at('2030-07-01Z');
const good: InspectInput = { ...pair, caPem: ca.certPem, now, dnsName: 'svc.ns.svc' };
const lines = pair.certPem.trimEnd().split('\n');
const truncated = [...lines.slice(0, 4), lines.at(-1)].join('\n');

describe('inspectPair', () => {
  it('accepts a good pair and reports its validity and SHA-256 fingerprint', () => {
    expect(inspectPair(good)).toEqual({
      ok: true,
      notBefore: leafTimes.notBefore,
      notAfter: leafTimes.notAfter,
      fingerprint: new X509Certificate(pair.certPem).fingerprint256,
    });
    expect(inspectPair({ ...good, dnsName: '10.0.0.1' }).ok).toBe(true);
    expect(inspectPair({ certPem: pair.certPem, keyPem: pair.keyPem, now }).ok).toBe(true);
    expect(inspectPair({ ...good, caPem: oldCa.certPem }).ok).toBe(true);
  });

  const cases: [string, Partial<InspectInput>, RegExp][] = [
    ['a key from another pair', { keyPem: ca.keyPem }, /^private key does not match the certificate$/],
    ['a fresh unrelated key', { keyPem: generateKey().privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }, /^private key does not match/],
    ['now after notAfter', { now: at('2032-01-01T00:00:01Z') }, /^certificate expired at 2032-01-01T00:00:00.000Z$/],
    ['now before notBefore', { now: at('2030-05-31Z') }, /^certificate is not valid before 2030-06-01T00:00:00.000Z$/],
    ['less left than minRemainingMs', { minRemainingMs: 600 * 86_400_000 }, /^certificate expires at 2032-01-01T00:00:00.000Z, within 51840000000 ms$/],
    ['a CA with the same name but another key', { caPem: twin.certPem }, /^certificate is not signed by the CA/],
    ['a CA with another name', { caPem: stranger.certPem }, /^certificate issuer "CN=virt-ca" is not the CA subject "CN=other-ca"$/],
    ['a CA that has expired', { caPem: oldCa.certPem, now: at('2031-06-01Z') }, /^CA certificate expired at 2031-01-01T00:00:00.000Z$/],
    ['a host it does not cover', { dnsName: 'evil.ns.svc' }, /^certificate does not cover "evil.ns.svc" \(names: DNS:svc.ns.svc, IP Address:10.0.0.1\)$/],
    ['an IP it does not cover', { dnsName: '10.0.0.2' }, /^certificate does not cover "10.0.0.2"/],
    ['a garbage certificate', { certPem: 'not a certificate at all' }, /^certificate is not a PEM certificate$/],
    ['an empty certificate', { certPem: '' }, /^certificate is empty$/],
    ['a truncated certificate PEM', { certPem: truncated }, /^certificate does not parse: /],
    ['PEM armour around non-certificate bytes', { certPem: toPem('CERTIFICATE', Buffer.from('3003020101', 'hex')) }, /^certificate does not parse: /],
    ['an empty key', { keyPem: '' }, /^private key is empty$/],
    ['a garbage key', { keyPem: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }, /^private key does not parse: /],
    ['a public key where the private key belongs', { keyPem: generateKey().publicKey.export({ type: 'spki', format: 'pem' }).toString() }, /^private key /],
    ['a garbage CA', { caPem: 'junk' }, /^CA certificate is not a PEM certificate$/],
    ['an invalid now', { now: new Date(Number.NaN) }, /^now is not a valid Date$/],
  ];

  it.each(cases)('refuses %s with a reason naming the problem', (_name, change, reason) => {
    const result = inspectPair({ ...good, ...change });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toMatch(reason);
  });

  it('never throws, whatever the strings and dates', () => {
    const der = new X509Certificate(pair.certPem).raw;
    const mutated = fc.tuple(fc.nat({ max: der.length - 1 }), fc.integer({ min: 1, max: 255 }), fc.nat({ max: der.length })).map(([i, flip, cut]) => {
      const copy = Buffer.from(der);
      copy[i] ^= flip;
      return toPem('CERTIFICATE', copy.subarray(0, Math.max(cut, i + 1)));
    });
    const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), mutated, fc.constant(pair.certPem));
    fc.assert(
      fc.property(text, text, fc.option(text), fc.date(), fc.option(fc.string()), (certPem, keyPem, caPem, when, dnsName) => {
        const result = inspectPair({ certPem, keyPem, caPem: caPem ?? undefined, now: when, dnsName: dnsName ?? undefined });
        expect(result.ok ? result.fingerprint : result.reason).toMatch(/\S/);
      }),
      { numRuns: 300 },
    );
  });
});

describe('renewAt', () => {
  it('places the renewal the given fraction into the lifetime', () => {
    expect(renewAt(at('2030-01-01Z'), at('2030-01-31Z'), 2 / 3).toISOString()).toBe('2030-01-21T00:00:00.000Z');
    expect(renewAt(at('2030-01-01Z'), at('2030-01-31Z'), 0).toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(renewAt(at('2030-01-01Z'), at('2030-01-31Z'), 1).toISOString()).toBe('2030-01-31T00:00:00.000Z');
  });

  it('refuses a fraction outside 0..1 and an empty lifetime', () => {
    expect(() => renewAt(at('2030-01-01Z'), at('2030-01-31Z'), 1.5)).toThrow(CertificateOptionsError);
    expect(() => renewAt(at('2030-01-01Z'), at('2030-01-31Z'), Number.NaN)).toThrow(/fraction: NaN is not between 0 and 1/);
    expect(() => renewAt(at('2030-01-31Z'), at('2030-01-01Z'), 0.5)).toThrow(/notAfter: must be after notBefore/);
  });
});
