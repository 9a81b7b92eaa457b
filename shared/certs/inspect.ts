/**
 * Decide whether a stored certificate and key can still be served: every check answers with a reason
 * instead of throwing, so a caller can log it and re-issue.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { errorMessage } from '../errors/index.js';
import { CertificateOptionsError } from './errors.js';
import { parseCertificate, type CertificateFields } from './parse.js';

export interface InspectInput {
  certPem: string;
  keyPem: string;
  /** When given, the certificate must be issued and signed by this CA, and the CA must be valid at `now`. */
  caPem?: string;
  now: Date;
  /** When given, the certificate must cover this host name (or IP literal, matched against IP SANs). */
  dnsName?: string;
  /** The certificate must stay valid at least this long after `now`. */
  minRemainingMs?: number;
}

export type InspectResult = { ok: true; notBefore: Date; notAfter: Date; fingerprint: string } | { ok: false; reason: string };

class Rejected extends Error {}

function attempt<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (err: unknown) {
    throw new Rejected(`${what}: ${errorMessage(err)}`);
  }
}

function parse(pem: unknown, what: string): { cert: X509Certificate; fields: CertificateFields } {
  if (typeof pem !== 'string' || pem.trim() === '') throw new Rejected(`${what} is empty`);
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Rejected(`${what} is not a PEM certificate`);
  const cert = attempt(`${what} does not parse`, () => new X509Certificate(pem));
  const fields = attempt(`${what} is not understood`, () => parseCertificate(cert.raw));
  return { cert, fields };
}

function parseKey(pem: unknown): KeyObject {
  if (typeof pem !== 'string' || pem.trim() === '') throw new Rejected('private key is empty');
  const key = attempt('private key does not parse', () => createPrivateKey(pem));
  if (key.type !== 'private') throw new Rejected('private key is not a private key');
  return key;
}

function checkTimes(what: string, fields: CertificateFields, now: Date, minRemainingMs = 0): void {
  if (now < fields.notBefore) throw new Rejected(`${what} is not valid before ${fields.notBefore.toISOString()}`);
  if (now > fields.notAfter) throw new Rejected(`${what} expired at ${fields.notAfter.toISOString()}`);
  if (fields.notAfter.getTime() - now.getTime() < minRemainingMs) {
    throw new Rejected(`${what} expires at ${fields.notAfter.toISOString()}, within ${minRemainingMs} ms`);
  }
}

function checkIssuedBy(leaf: X509Certificate, leafFields: CertificateFields, caPem: string, now: Date): void {
  const ca = parse(caPem, 'CA certificate');
  checkTimes('CA certificate', ca.fields, now);
  if (!leafFields.issuer.equals(ca.fields.subject)) {
    const text = (name: string): string => name.replaceAll('\n', ', ');
    throw new Rejected(`certificate issuer "${text(leaf.issuer)}" is not the CA subject "${text(ca.cert.subject)}"`);
  }
  if (!attempt('signature check failed', () => leaf.verify(ca.cert.publicKey))) {
    throw new Rejected('certificate is not signed by the CA (signature does not verify with the CA key)');
  }
}

function checkName(cert: X509Certificate, name: string): void {
  const covered = isIP(name) ? cert.checkIP(name) : cert.checkHost(name, { wildcards: true });
  if (covered === undefined) {
    throw new Rejected(`certificate does not cover "${name}" (names: ${cert.subjectAltName ?? 'none'})`);
  }
}

function inspect(input: InspectInput): InspectResult {
  if (!(input.now instanceof Date) || Number.isNaN(input.now.getTime())) throw new Rejected('now is not a valid Date');
  const { cert, fields } = parse(input.certPem, 'certificate');
  const key = parseKey(input.keyPem);
  if (!attempt('private key check failed', () => cert.checkPrivateKey(key))) {
    throw new Rejected('private key does not match the certificate');
  }
  checkTimes('certificate', fields, input.now, input.minRemainingMs);
  if (input.caPem !== undefined) checkIssuedBy(cert, fields, input.caPem, input.now);
  if (input.dnsName !== undefined) checkName(cert, input.dnsName);
  return { ok: true, notBefore: fields.notBefore, notAfter: fields.notAfter, fingerprint: cert.fingerprint256 };
}

/** Check a certificate/key pair; never throws: anything wrong (garbage input included) is a `reason`. */
export function inspectPair(input: InspectInput): InspectResult {
  try {
    return inspect(input);
  } catch (err: unknown) {
    return { ok: false, reason: err instanceof Rejected ? err.message : `inspection failed: ${errorMessage(err)}` };
  }
}

/**
 * When to renew: `fraction` of the way from notBefore to notAfter (2/3 renews with a third of the
 * lifetime left). Throws CertificateOptionsError unless 0 <= fraction <= 1 and notAfter > notBefore.
 */
export function renewAt(notBefore: Date, notAfter: Date, fraction: number): Date {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  const problems = [];
  if (!(fraction >= 0 && fraction <= 1)) problems.push({ path: 'fraction', message: `${fraction} is not between 0 and 1` });
  if (!(lifetime > 0)) problems.push({ path: 'notAfter', message: 'must be after notBefore' });
  if (problems.length) throw new CertificateOptionsError('renewAt', problems);
  return new Date(notBefore.getTime() + Math.floor(lifetime * fraction));
}
