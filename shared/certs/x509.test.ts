import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CertificateOptionsError } from './errors.js';
import { generateKey, issueCertificate, type CertificatePair, type IssueOptions } from './x509.js';

const run = promisify(execFile);
const DAY = 86_400_000;

/** Validity around the real clock: openssl checks certificates against it. */
function validity(fromDays: number, toDays: number): Pick<IssueOptions, 'notBefore' | 'notAfter'> {
  const now = Date.now();
  return { notBefore: new Date(now + fromDays * DAY), notAfter: new Date(now + toDays * DAY) };
}

async function withFiles<T>(files: Record<string, string>, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'certs-test-'));
  try {
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function openssl(dir: string, args: string[]): Promise<string> {
  const { stdout } = await run('openssl', args, { cwd: dir, timeout: 30_000 });
  return stdout;
}

function issueChain(): { ca: CertificatePair; server: CertificatePair; client: CertificatePair } {
  const ca = issueCertificate({ commonName: 'virt-ca', organizations: ['virtualization'], usage: 'ca', ...validity(-1, 3650) });
  const server = issueCertificate({
    commonName: 'admission',
    dnsNames: ['admission.d8-virtualization.svc', '*.d8-virtualization.svc'],
    ipAddresses: ['127.0.0.1', '::1', 'fd00::ffff:10.0.0.1'],
    usage: 'server',
    issuer: ca,
    ...validity(0, 365),
  });
  const client = issueCertificate({ commonName: 'virt-controller', organizations: ['system:masters'], usage: 'client', issuer: ca, ...validity(0, 365) });
  return { ca, server, client };
}

describe('issueCertificate, checked by openssl', () => {
  it('issues a CA, a server and a client certificate that openssl verifies strictly, each for its purpose', async () => {
    const { ca, server, client } = issueChain();
    await withFiles({ 'ca.pem': ca.certPem, 'server.pem': server.certPem, 'client.pem': client.certPem }, async (dir) => {
      const verify = (purpose: string, file: string): Promise<string> =>
        openssl(dir, ['verify', '-x509_strict', '-purpose', purpose, '-CAfile', 'ca.pem', file]);
      expect(await verify('sslserver', 'server.pem')).toBe('server.pem: OK\n');
      expect(await verify('sslclient', 'client.pem')).toBe('client.pem: OK\n');
      await expect(verify('sslserver', 'client.pem')).rejects.toThrow(/unsuitable certificate purpose/);
    });
  });

  it('shows CA:TRUE on the CA and every SAN entry on the server certificate', async () => {
    const { ca, server } = issueChain();
    await withFiles({ 'ca.pem': ca.certPem, 'server.pem': server.certPem }, async (dir) => {
      const caText = await openssl(dir, ['x509', '-noout', '-text', '-in', 'ca.pem']);
      expect(caText).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
      expect(caText).toMatch(/Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
      expect(caText).toContain('Subject: O = virtualization, CN = virt-ca');
      const text = await openssl(dir, ['x509', '-noout', '-text', '-in', 'server.pem']);
      expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
      expect(text).toContain('Issuer: O = virtualization, CN = virt-ca');
      expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
      expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment/);
      expect(text).toMatch(/Extended Key Usage: \s+TLS Web Server Authentication\n/);
      expect(text).toContain(
        'DNS:admission.d8-virtualization.svc, DNS:*.d8-virtualization.svc, IP Address:127.0.0.1, ' +
          'IP Address:0:0:0:0:0:0:0:1, IP Address:FD00:0:0:0:0:FFFF:A00:1',
      );
    });
  });

  it('chains a leaf through an intermediate CA, its AKI naming the intermediate SKI', async () => {
    const root = issueCertificate({ commonName: 'root', usage: 'ca', ...validity(-1, 3650) });
    const mid = issueCertificate({ commonName: 'intermediate', usage: 'ca', issuer: root, ...validity(-1, 3000) });
    const leaf = issueCertificate({ commonName: 'node-1', dnsNames: ['node-1'], usage: 'server-client', issuer: mid, ...validity(0, 30) });
    await withFiles({ 'root.pem': root.certPem, 'mid.pem': mid.certPem, 'leaf.pem': leaf.certPem }, async (dir) => {
      expect(await openssl(dir, ['verify', '-x509_strict', '-CAfile', 'root.pem', '-untrusted', 'mid.pem', 'leaf.pem'])).toBe('leaf.pem: OK\n');
      const leafText = await openssl(dir, ['x509', '-noout', '-text', '-in', 'leaf.pem']);
      const midText = await openssl(dir, ['x509', '-noout', '-text', '-in', 'mid.pem']);
      const ski = /Subject Key Identifier: \s+([0-9A-F:]+)/.exec(midText)?.[1];
      expect(ski).toBeDefined();
      expect(leafText).toMatch(new RegExp(`Authority Key Identifier: \\s+(keyid:)?${ski}`));
      expect(leafText).toContain('TLS Web Server Authentication, TLS Web Client Authentication');
    });
  });
});

describe('issueCertificate under a CA it did not issue', () => {
  it('signs with an openssl-made CA, repeating its PrintableString subject as the issuer, and openssl verifies the leaf', async () => {
    await withFiles({}, async (dir) => {
      await openssl(dir, [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.pem',
        '-days',
        '30',
        '-subj',
        '/C=DE/O=Example/CN=outside-ca',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ]);
      const ca = { certPem: await readFile(join(dir, 'ca.pem'), 'utf8'), keyPem: await readFile(join(dir, 'ca.key'), 'utf8') };
      const notBefore = new Date(new X509Certificate(ca.certPem).validFrom);
      const leaf = issueCertificate({
        commonName: 'svc',
        dnsNames: ['svc'],
        usage: 'server',
        issuer: ca,
        notBefore,
        notAfter: new Date(notBefore.getTime() + DAY),
      });
      await writeFile(join(dir, 'leaf.pem'), leaf.certPem);
      expect(await openssl(dir, ['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', 'ca.pem', 'leaf.pem'])).toBe('leaf.pem: OK\n');
      expect(new X509Certificate(leaf.certPem).issuer).toBe('C=DE\nO=Example\nCN=outside-ca');
    });
  });
});

describe('issueCertificate', () => {
  it('reuses a given key, writes it as PKCS#8 and encodes validity to the second', () => {
    const key = generateKey();
    const pair = issueCertificate({
      commonName: 'self',
      usage: 'ca',
      key: key.privateKey,
      notBefore: new Date('2030-01-01T00:00:00.900Z'),
      notAfter: new Date('2060-01-01T00:00:00.900Z'),
    });
    expect(pair.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const cert = new X509Certificate(pair.certPem);
    expect(cert.checkPrivateKey(createPrivateKey(pair.keyPem))).toBe(true);
    expect(cert.publicKey.equals(key.publicKey)).toBe(true);
    expect(cert.ca).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.validFrom).toBe('Jan  1 00:00:00 2030 GMT');
    expect(cert.validTo).toBe('Jan  1 00:00:00 2060 GMT');
    expect(cert.serialNumber).toMatch(/^[4-7][0-9A-F]{31}$/);
  });

  it('gives every certificate a different serial and, without a key, a different key', () => {
    const a = issueCertificate({ commonName: 'a', usage: 'client', ...validity(0, 1) });
    const b = issueCertificate({ commonName: 'a', usage: 'client', ...validity(0, 1) });
    expect(new X509Certificate(a.certPem).serialNumber).not.toBe(new X509Certificate(b.certPem).serialNumber);
    expect(a.keyPem).not.toBe(b.keyPem);
  });

  it('lists every inconsistency at once with its field path and a stable code', () => {
    const ca = issueCertificate({ commonName: 'ca', usage: 'ca', notBefore: new Date('2030-01-01Z'), notAfter: new Date('2031-01-01Z') });
    const base: IssueOptions = {
      commonName: 'x',
      usage: 'server',
      dnsNames: ['x'],
      issuer: ca,
      notBefore: new Date('2030-02-01Z'),
      notAfter: new Date('2030-03-01Z'),
    };
    expect(() => issueCertificate(base)).not.toThrow();
    const attempt = (opts: Partial<IssueOptions>): CertificateOptionsError => {
      try {
        issueCertificate({ ...base, ...opts });
      } catch (err: unknown) {
        if (err instanceof CertificateOptionsError) return err;
        throw err;
      }
      throw new Error('issueCertificate accepted inconsistent options');
    };
    const paths = (opts: Partial<IssueOptions>): string[] => attempt(opts).problems.map((p) => p.path);
    const sameSecond = attempt({ notAfter: new Date('2030-02-01T00:00:00.500Z') });
    expect(sameSecond.code).toBe('CERT_OPTIONS_INVALID');
    expect(sameSecond.status).toBe(400);
    expect(sameSecond.problems.map((p) => p.path)).toEqual(['notAfter']);
    expect(paths({ notBefore: new Date('2029-12-31Z'), notAfter: new Date('2031-01-02Z') })).toEqual(['notBefore', 'notAfter']);
    expect(attempt({ notAfter: new Date('2031-01-02Z') }).message).toContain("notAfter: is after the issuer's notAfter 2031-01-01T00:00:00.000Z");
    expect(paths({ dnsNames: [], ipAddresses: [] })).toEqual(['dnsNames']);
    expect(paths({ usage: 'server-client', dnsNames: undefined })).toEqual(['dnsNames']);
    expect(paths({ dnsNames: ['bad name', 'ok'], ipAddresses: ['300.1.1.1', 'fe80::1%eth0'] })).toEqual(['dnsNames[0]', 'ipAddresses[0]', 'ipAddresses[1]']);
    expect(paths({ commonName: '', organizations: ['x'.repeat(65)] })).toEqual(['commonName', 'organizations[0]']);
    expect(paths({ notBefore: new Date(Number.NaN) })).toEqual(['notBefore']);
    expect(paths({ key: generateKey().publicKey })).toEqual(['key']);
  });

  it('refuses an issuer that is not a CA, whose key does not match, or that does not parse', () => {
    const times = validity(0, 1);
    const ca = issueCertificate({ commonName: 'ca', usage: 'ca', ...validity(-1, 10) });
    const leaf = issueCertificate({ commonName: 'leaf', usage: 'client', issuer: ca, ...times });
    const problems = (issuer: CertificatePair): string[] => {
      try {
        issueCertificate({ commonName: 'x', usage: 'client', issuer, ...times });
        return [];
      } catch (err: unknown) {
        return err instanceof CertificateOptionsError ? err.problems.map((p) => `${p.path}: ${p.message}`) : [String(err)];
      }
    };
    expect(problems(ca)).toEqual([]);
    expect(problems(leaf)).toEqual(['issuer.certPem: is not a CA certificate (basicConstraints CA:FALSE)']);
    expect(problems({ certPem: ca.certPem, keyPem: leaf.keyPem })).toEqual(['issuer.keyPem: does not match issuer.certPem']);
    expect(problems({ certPem: 'junk', keyPem: ca.keyPem })[0]).toMatch(/^issuer.certPem: does not parse: /);
    expect(problems({ certPem: ca.certPem, keyPem: 'junk' })[0]).toMatch(/^issuer.keyPem: does not parse: /);
  });
});
