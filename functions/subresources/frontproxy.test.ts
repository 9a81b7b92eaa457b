import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { issueCertificate, type CertificatePair } from '../../shared/certs/index.js';
import { authenticate, parseRequestHeaderConfig } from './frontproxy.js';

const now = new Date('2026-12-01T00:00:00Z');
const year = (n: number): Date => new Date(now.getTime() + n * 365 * 24 * 3600 * 1000);
const ca = issueCertificate({ commonName: 'front-proxy-ca', usage: 'ca', notBefore: year(-1), notAfter: year(5) });
const otherCa = issueCertificate({ commonName: 'other-ca', usage: 'ca', notBefore: year(-1), notAfter: year(5) });
const leaf = (issuer: CertificatePair, opts: { cn?: string; usage?: 'client' | 'server'; notAfter?: Date } = {}): X509Certificate =>
  new X509Certificate(
    issueCertificate({
      commonName: opts.cn ?? 'front-proxy-client',
      usage: opts.usage ?? 'client',
      ...(opts.usage === 'server' ? { dnsNames: ['x.example'] } : {}),
      notBefore: year(-1),
      notAfter: opts.notAfter ?? year(1),
      issuer,
    }).certPem,
  );

const data = {
  'requestheader-client-ca-file': otherCa.certPem + ca.certPem,
  'requestheader-allowed-names': '["front-proxy-client"]',
  'requestheader-username-headers': '["X-Remote-User"]',
  'requestheader-group-headers': '["X-Remote-Group"]',
  'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
};
const config = parseRequestHeaderConfig(data);
const headers = { 'x-remote-user': ['alice'], 'x-remote-group': ['devs', 'system:authenticated'], 'x-remote-extra-scopes%2fone': ['a', 'b'] };

describe('parseRequestHeaderConfig', () => {
  it.each([
    ['no CA', {}, 'no requestheader-client-ca-file'],
    ['a CA that is no PEM', { ...data, 'requestheader-client-ca-file': 'garbage' }, 'holds no PEM certificate'],
    [
      'a broken CA',
      { ...data, 'requestheader-client-ca-file': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' },
      'certificate 1 does not parse',
    ],
    ['names that are no JSON', { ...data, 'requestheader-allowed-names': '[front' }, 'requestheader-allowed-names is not a JSON list of strings'],
    ['headers of the wrong type', { ...data, 'requestheader-group-headers': '[1]' }, 'requestheader-group-headers is not a JSON list of strings'],
    ['no user header', { ...data, 'requestheader-username-headers': '[]' }, 'no header can name the user'],
  ])('refuses %s, naming the problem', (_what, input, message) => {
    expect(() => parseRequestHeaderConfig(input as Record<string, string>)).toThrow(message);
  });

  it('reads every CA of the bundle and the header names', () => {
    expect(config.cas).toHaveLength(2);
    expect(config).toMatchObject({ allowedNames: ['front-proxy-client'], usernameHeaders: ['X-Remote-User'], uidHeaders: [] });
  });
});

describe('authenticate', () => {
  it('accepts the front proxy and reads user, groups (every value) and extras (unescaped keys)', () => {
    expect(authenticate(config, leaf(ca), headers, now)).toEqual({
      ok: true,
      user: { name: 'alice', uid: undefined, groups: ['devs', 'system:authenticated'], extra: { 'scopes/one': ['a', 'b'] } },
    });
  });

  it.each([
    ['no certificate', undefined, 'no client certificate'],
    ['another CA', leaf(issueCertificate({ commonName: 'x', usage: 'ca', notBefore: year(-1), notAfter: year(5) })), 'not signed by the front-proxy CA'],
    ['a name not allowed', leaf(ca, { cn: 'someone-else' }), 'name "someone-else" is not one of the allowed'],
    ['an expired certificate', leaf(ca, { notAfter: year(-0.5) }), 'is not valid now'],
    ['a server certificate', leaf(ca, { usage: 'server' }), 'not for client authentication'],
  ])('refuses %s', (_what, cert, reason) => {
    const result = authenticate(config, cert, headers, now);
    expect(result).toEqual({ ok: false, reason: expect.stringContaining(reason) });
  });

  it('refuses the front proxy when no header names a user (empty values do not count)', () => {
    expect(authenticate(config, leaf(ca), { 'x-remote-user': [''] }, now)).toEqual({ ok: false, reason: 'no user in the request headers (X-Remote-User)' });
  });

  it('accepts any certificate of the CA when no names are listed', () => {
    const open = parseRequestHeaderConfig({ ...data, 'requestheader-allowed-names': '' });
    expect(authenticate(open, leaf(ca, { cn: 'anyone' }), headers, now).ok).toBe(true);
  });
});
