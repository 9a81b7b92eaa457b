import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { issueCertificate, inspectPair } from '../../../shared/certs/index.js';
import {
  clientLeaf,
  decideCa,
  decideLeaf,
  dnsNamesOf,
  servingLeaf,
  SHARED_SECRET_BYTES,
  SHARED_SECRET_KEY,
  sharedSecretProblem,
  splitPem,
  trustBundle,
  type CertPolicy,
  type KeyPair,
} from './decide.js';
import { webhookOps } from './manager.js';

const DAY = 86_400_000;
const now = new Date('2026-12-03T08:00:00Z');
const policy: CertPolicy = { caValidityMs: 300 * DAY, servingValidityMs: 30 * DAY, renewFraction: 2 / 3, caOverlapMs: 60_000 };
const target = { service: 'admission-webhook', namespace: 'd8-virtualization' };

function ca(name: string, from: Date, days: number): KeyPair {
  return issueCertificate({ commonName: name, usage: 'ca', notBefore: from, notAfter: new Date(from.getTime() + days * DAY) });
}
function serving(issuer: KeyPair, from: Date, days: number, dnsNames = dnsNamesOf(target)): KeyPair {
  return issueCertificate({ commonName: 'x', dnsNames, usage: 'server', issuer, notBefore: from, notAfter: new Date(from.getTime() + days * DAY) });
}
const keep = { rotate: false };
const daysAgo = (d: number): Date => new Date(now.getTime() - d * DAY);
const root = ca('root', daysAgo(30), 300);

describe('decideCa', () => {
  it.each([
    ['no Secret yet', { certPem: undefined, keyPem: undefined, ...keep }, 'no CA yet', false],
    ['garbage in the Secret', { certPem: 'garbage', keyPem: 'garbage', ...keep }, /unusable/, true],
    ['a key that is not the certificate’s', { certPem: root.certPem, keyPem: ca('other', daysAgo(1), 10).keyPem, ...keep }, /unusable/, true],
    ['an expired CA', { ...ca('old', daysAgo(20), 10), ...keep }, /unusable/, true],
    ['a leaf certificate where the CA should be', { ...serving(root, daysAgo(1), 10), ...keep }, 'the stored CA certificate is not a CA', true],
    ['a CA past two thirds of its life', { ...ca('due', daysAgo(210), 300), ...keep }, 'the CA is due for renewal', false],
    ['a rotation asked for', { ...root, rotate: true }, 'rotation requested', false],
  ] as const)('makes a new CA for %s', (_name, stored, why, broken) => {
    const d = decideCa(stored, now, policy, 'test-ca');
    expect(d.why).toEqual(typeof why === 'string' ? why : expect.stringMatching(why));
    expect(d.broken).toBe(broken);
    const cert = new X509Certificate(d.pair.certPem);
    expect([cert.ca, cert.subject, inspectPair({ ...d.pair, now }).ok]).toEqual([true, 'CN=test-ca', true]);
    expect(new Date(cert.validTo).getTime() - now.getTime()).toBeGreaterThan(299 * DAY);
  });

  it('keeps a sound CA that is not yet due', () => {
    expect(decideCa({ ...root, ...keep }, now, policy, 'test-ca')).toEqual({ pair: root, why: undefined, broken: false });
  });
});

describe('decideLeaf for a serving certificate', () => {
  it('keeps a sound certificate of this CA for the right names', () => {
    const leaf = serving(root, daysAgo(1), 30);
    expect(decideLeaf({ ...leaf, ...keep }, root, servingLeaf(target), now, policy)).toEqual({ pair: leaf, why: undefined, broken: false });
  });

  it.each([
    ['no Secret yet', () => ({ certPem: undefined, keyPem: undefined, ...keep }), 'no certificate yet', false],
    ['one signed by a previous CA', () => ({ ...serving(ca('previous', daysAgo(5), 100), daysAgo(1), 30), ...keep }), 'signed by a previous CA', false],
    ['one for other names', () => ({ ...serving(root, daysAgo(1), 30, ['elsewhere.example']), ...keep }), /unusable.*elsewhere|unusable/, true],
    ['an expired one', () => ({ ...serving(root, daysAgo(9), 5), ...keep }), /unusable/, true],
    ['garbage', () => ({ certPem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', keyPem: 'x', ...keep }), /unusable/, true],
    ['one past two thirds of its life', () => ({ ...serving(root, daysAgo(21), 30), ...keep }), 'the certificate is due for renewal', false],
    ['a rotation asked for', () => ({ ...serving(root, daysAgo(1), 30), rotate: true }), 'rotation requested', false],
  ] as const)('issues a new one for %s', (_name, stored, why, broken) => {
    const d = decideLeaf(stored(), root, servingLeaf(target), now, policy);
    expect(d.why).toEqual(typeof why === 'string' ? why : expect.stringMatching(why));
    expect(d.broken).toBe(broken);
    const check = inspectPair({ ...d.pair, caPem: root.certPem, now, dnsName: 'admission-webhook.d8-virtualization.svc' });
    expect(check.ok).toBe(true);
  });

  it('keeps a certificate of the previous CA until the new CA has been trusted for the overlap', () => {
    const fresh = decideCa({ certPem: undefined, keyPem: undefined, ...keep }, now, policy, 'new-ca').pair;
    const old = serving(root, daysAgo(1), 30);
    const kept = decideLeaf({ ...old, ...keep }, fresh, servingLeaf(target), now, policy);
    expect(kept).toEqual({ pair: old, why: undefined, broken: false, recheckAt: new Date(now.getTime() + 60_000) });
    const later = decideLeaf({ ...old, ...keep }, fresh, servingLeaf(target), new Date(now.getTime() + 60_000), policy);
    expect(later).toMatchObject({ why: 'signed by a previous CA', broken: false });
  });

  it('never issues a certificate that outlives its CA', () => {
    const shortCa = ca('short', daysAgo(1), 10);
    const d = decideLeaf({ certPem: undefined, keyPem: undefined, ...keep }, shortCa, servingLeaf(target), now, policy);
    expect(new X509Certificate(d.pair.certPem).validTo).toBe(new X509Certificate(shortCa.certPem).validTo);
  });

  it('covers every in-cluster name of the Service', () => {
    const d = decideLeaf({ certPem: undefined, keyPem: undefined, ...keep }, root, servingLeaf(target), now, policy);
    const names = new X509Certificate(d.pair.certPem).subjectAltName;
    expect(names).toBe(
      dnsNamesOf(target)
        .map((n) => `DNS:${n}`)
        .join(', '),
    );
  });
});

describe('trustBundle', () => {
  const previous = ca('previous', daysAgo(100), 200);
  const expired = ca('expired', daysAgo(100), 50);
  const leaf = serving(root, daysAgo(1), 30);

  it('puts the current CA first and keeps older CAs of ours while they are valid', () => {
    const bundle = trustBundle(root.certPem, [previous.certPem + expired.certPem, 'garbage', leaf.certPem, root.certPem, undefined], now);
    expect(splitPem(bundle).map((pem) => new X509Certificate(pem).subject)).toEqual(['CN=root', 'CN=previous']);
  });

  it('is stable: the same inputs give the same text, so an unchanged bundle writes nothing', () => {
    const once = trustBundle(root.certPem, [previous.certPem], now);
    expect(trustBundle(root.certPem, [once], now)).toBe(once);
  });
});

describe('webhookOps', () => {
  it('sets only the caBundles that differ, each guarded by a test of the webhook name', () => {
    const cfg = {
      metadata: { name: 'virtualization-admission' },
      webhooks: [
        { name: 'a', clientConfig: { caBundle: 'QQ==' } },
        { name: 'b', clientConfig: {} },
        { name: 'c', clientConfig: { caBundle: 'old' } },
      ],
    };
    expect(webhookOps(cfg, 'QQ==')).toEqual([
      { op: 'test', path: '/webhooks/1/name', value: 'b' },
      { op: 'add', path: '/webhooks/1/clientConfig/caBundle', value: 'QQ==' },
      { op: 'test', path: '/webhooks/2/name', value: 'c' },
      { op: 'add', path: '/webhooks/2/clientConfig/caBundle', value: 'QQ==' },
    ]);
    expect(webhookOps({ ...cfg, webhooks: cfg.webhooks.slice(0, 1) }, 'QQ==')).toEqual([]);
  });
});

describe('decideLeaf for a client certificate', () => {
  const leaf = clientLeaf('virtualization-api-proxy');
  const client = (issuer: KeyPair, commonName: string, from = daysAgo(1), days = 30): KeyPair =>
    issueCertificate({ commonName, usage: 'client', issuer, notBefore: from, notAfter: new Date(from.getTime() + days * DAY) });

  it('issues one for client authentication with the name, signed by the CA', () => {
    const d = decideLeaf({ certPem: undefined, keyPem: undefined, ...keep }, root, leaf, now, policy);
    expect(d.why).toBe('no certificate yet');
    const cert = new X509Certificate(d.pair.certPem);
    expect(cert.subject).toBe('CN=virtualization-api-proxy');
    expect(cert.keyUsage).toContain('1.3.6.1.5.5.7.3.2');
    expect(cert.keyUsage).not.toContain('1.3.6.1.5.5.7.3.1');
    expect(cert.subjectAltName).toBeUndefined();
    expect(inspectPair({ ...d.pair, caPem: root.certPem, now }).ok).toBe(true);
  });

  it('keeps a sound one of this CA with the name', () => {
    const stored = client(root, 'virtualization-api-proxy');
    expect(decideLeaf({ ...stored, ...keep }, root, leaf, now, policy)).toEqual({ pair: stored, why: undefined, broken: false });
  });

  it.each([
    ['one naming someone else', () => client(root, 'someone-else'), 'the stored certificate does not name virtualization-api-proxy', true],
    ['one of a previous CA', () => client(ca('previous', daysAgo(5), 100), 'virtualization-api-proxy'), 'signed by a previous CA', false],
    ['one past two thirds of its life', () => client(root, 'virtualization-api-proxy', daysAgo(21)), 'the certificate is due for renewal', false],
  ] as const)('issues a new one for %s', (_name, stored, why, broken) => {
    const d = decideLeaf({ ...stored(), ...keep }, root, leaf, now, policy);
    expect([d.why, d.broken]).toEqual([why, broken]);
    expect(new X509Certificate(d.pair.certPem).subject).toBe('CN=virtualization-api-proxy');
  });
});

describe('sharedSecretProblem', () => {
  const b64 = (bytes: number): string => Buffer.alloc(bytes, 7).toString('base64');
  const sound = { exists: true, type: 'Opaque', value: b64(SHARED_SECRET_BYTES), rotate: false };

  it('keeps a sound Opaque secret of at least 32 bytes', () => {
    expect(sharedSecretProblem(sound)).toBeUndefined();
    expect(sharedSecretProblem({ ...sound, value: b64(32) })).toBeUndefined();
    expect(sharedSecretProblem({ ...sound, type: undefined })).toBeUndefined();
  });

  it.each([
    ['missing', { ...sound, exists: false, type: undefined, value: undefined }, 'missing'],
    ['of another type', { ...sound, type: 'kubernetes.io/tls' }, 'type kubernetes.io/tls, not Opaque'],
    ['asked to rotate', { ...sound, rotate: true }, 'rotation asked'],
    ['without its key', { ...sound, value: undefined }, `no key ${SHARED_SECRET_KEY}`],
    ['too short', { ...sound, value: b64(31) }, '31 bytes, fewer than 32'],
    ['empty', { ...sound, value: '' }, '0 bytes, fewer than 32'],
  ])('makes a new one when %s', (_name, stored, why) => {
    expect(sharedSecretProblem(stored)).toBe(why);
  });
});
