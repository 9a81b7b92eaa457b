/**
 * Issue X.509 v3 certificates (a self-signed CA, or leaves and intermediates signed by one) with
 * ECDSA P-256 and SHA-256: the structures are encoded by @peculiar/asn1-x509, keys and signatures are
 * node:crypto's.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import type { FieldProblem } from '../errors/index.js';
import { errorMessage } from '../errors/index.js';
import { AsnConvert } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate, SubjectPublicKeyInfo, TBSCertificate, Validity, Version, type Name } from '@peculiar/asn1-x509';
import { CertificateOptionsError } from './errors.js';
import { distinguishedName, extensions, isDnsName, isIpAddress, type CertificateUsage } from './extensions.js';
import { keyIdentifier, parseCertificate, type CertificateFields } from './parse.js';

export type { CertificateUsage } from './extensions.js';

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** A certificate and its private key, both PEM (the key as PKCS#8). */
export interface CertificatePair {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  /** Subject O entries (for Kubernetes client certificates: the groups). */
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  /** IPv4 or IPv6 literals. */
  ipAddresses?: readonly string[];
  usage: CertificateUsage;
  /** Encoded to the second (milliseconds are dropped). */
  notBefore: Date;
  notAfter: Date;
  /** The signing CA; absent for a self-signed certificate. */
  issuer?: CertificatePair;
  /** The private key to certify (P-256), e.g. `createPrivateKey(oldKeyPem)`; a new one when absent. */
  key?: KeyObject;
}

/** ecdsa-with-SHA256 (RFC 5758 3.2): the AlgorithmIdentifier has no parameters. */
const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const ecdsaWithSha256 = (): AlgorithmIdentifier => new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 });
const USAGES: readonly CertificateUsage[] = ['ca', 'server', 'client', 'server-client'];

/** A fresh ECDSA P-256 key pair. */
export function generateKey(): KeyPair {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

function isP256(key: KeyObject): boolean {
  return key.type === 'private' && key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

interface Signer {
  name: Name;
  keyId: Buffer;
  key: KeyObject;
  fields: CertificateFields | undefined;
}

function loadIssuer(issuer: CertificatePair, problems: FieldProblem[]): Signer | undefined {
  let cert: X509Certificate;
  let key: KeyObject;
  try {
    cert = new X509Certificate(issuer.certPem);
  } catch (err: unknown) {
    problems.push({ path: 'issuer.certPem', message: `does not parse: ${errorMessage(err)}` });
    return undefined;
  }
  try {
    key = createPrivateKey(issuer.keyPem);
  } catch (err: unknown) {
    problems.push({ path: 'issuer.keyPem', message: `does not parse: ${errorMessage(err)}` });
    return undefined;
  }
  const before = problems.length;
  if (!cert.ca) problems.push({ path: 'issuer.certPem', message: 'is not a CA certificate (basicConstraints CA:FALSE)' });
  if (!isP256(key)) problems.push({ path: 'issuer.keyPem', message: 'must be an ECDSA P-256 private key' });
  else if (!cert.checkPrivateKey(key)) problems.push({ path: 'issuer.keyPem', message: 'does not match issuer.certPem' });
  if (problems.length > before) return undefined;
  let fields: CertificateFields;
  try {
    fields = parseCertificate(cert.raw);
  } catch (err: unknown) {
    problems.push({ path: 'issuer.certPem', message: errorMessage(err) });
    return undefined;
  }
  return { name: fields.subjectName, keyId: fields.subjectKeyId ?? keyIdentifier(fields.publicKey), key, fields };
}

function toSecond(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

function checkValidity(opts: IssueOptions, signer: Signer | undefined, problems: FieldProblem[]): void {
  const valid = (d: unknown): d is Date => d instanceof Date && !Number.isNaN(d.getTime()) && d.getUTCFullYear() <= 9999;
  if (!valid(opts.notBefore)) problems.push({ path: 'notBefore', message: 'must be a valid Date up to the year 9999' });
  if (!valid(opts.notAfter)) problems.push({ path: 'notAfter', message: 'must be a valid Date up to the year 9999' });
  if (!valid(opts.notBefore) || !valid(opts.notAfter)) return;
  const [from, to] = [toSecond(opts.notBefore), toSecond(opts.notAfter)];
  if (to <= from) problems.push({ path: 'notAfter', message: `must be after notBefore (${from.toISOString()}), to the second` });
  const ca = signer?.fields;
  if (ca && from < ca.notBefore) {
    problems.push({ path: 'notBefore', message: `is before the issuer's notBefore ${ca.notBefore.toISOString()}` });
  }
  if (ca && to > ca.notAfter) {
    problems.push({ path: 'notAfter', message: `is after the issuer's notAfter ${ca.notAfter.toISOString()}` });
  }
}

function checkNames(opts: IssueOptions, problems: FieldProblem[]): void {
  const limit = (path: string, value: unknown): void => {
    if (typeof value !== 'string' || value.length === 0 || value.length > 64) {
      problems.push({ path, message: 'must be 1 to 64 characters' });
    }
  };
  limit('commonName', opts.commonName);
  (opts.organizations ?? []).forEach((o, i) => limit(`organizations[${i}]`, o));
  (opts.dnsNames ?? []).forEach((n, i) => {
    if (!isDnsName(n)) problems.push({ path: `dnsNames[${i}]`, message: `"${n}" is not a DNS name` });
  });
  (opts.ipAddresses ?? []).forEach((ip, i) => {
    if (!isIpAddress(ip)) problems.push({ path: `ipAddresses[${i}]`, message: `"${ip}" is not an IPv4 or IPv6 address` });
  });
  if (!USAGES.includes(opts.usage)) problems.push({ path: 'usage', message: `must be one of ${USAGES.join(', ')}` });
  const serving = opts.usage === 'server' || opts.usage === 'server-client';
  if (serving && !opts.dnsNames?.length && !opts.ipAddresses?.length) {
    problems.push({ path: 'dnsNames', message: `a ${opts.usage} certificate needs at least one DNS name or IP address` });
  }
}

/** 16 random octets with the top bit clear (a positive INTEGER) and the next one set (always 16 octets). */
function serialNumber(): ArrayBuffer {
  const serial = new Uint8Array(randomBytes(16));
  serial[0] = (serial[0] & 0x7f) | 0x40;
  return serial.buffer;
}

/**
 * Issue one certificate. Throws CertificateOptionsError listing every inconsistency (bad names, a
 * server certificate without names, notAfter not after notBefore, a validity outside the issuer's, an
 * issuer that is not a CA or whose key does not match).
 */
export function issueCertificate(opts: IssueOptions): CertificatePair {
  const problems: FieldProblem[] = [];
  const privateKey = opts.key ?? generateKey().privateKey;
  if (!isP256(privateKey)) problems.push({ path: 'key', message: 'must be an ECDSA P-256 private key' });
  const issuer = opts.issuer ? loadIssuer(opts.issuer, problems) : undefined;
  checkValidity(opts, issuer, problems);
  checkNames(opts, problems);
  if (problems.length) throw new CertificateOptionsError('certificate options', problems);

  const spki = AsnConvert.parse(createPublicKey(privateKey).export({ type: 'spki', format: 'der' }), SubjectPublicKeyInfo);
  const subject = distinguishedName(opts.commonName, opts.organizations);
  const subjectKeyId = keyIdentifier(spki.subjectPublicKey);
  const signer: Signer = issuer ?? { name: subject, keyId: subjectKeyId, key: privateKey, fields: undefined };
  const tbsCertificate = new TBSCertificate({
    version: Version.v3,
    serialNumber: serialNumber(),
    signature: ecdsaWithSha256(),
    issuer: signer.name,
    validity: new Validity({ notBefore: toSecond(opts.notBefore), notAfter: toSecond(opts.notAfter) }),
    subject,
    subjectPublicKeyInfo: spki,
    extensions: extensions({
      usage: opts.usage,
      dnsNames: opts.dnsNames ?? [],
      ipAddresses: opts.ipAddresses ?? [],
      subjectKeyId,
      authorityKeyId: signer.keyId,
    }),
  });
  const tbs = Buffer.from(AsnConvert.serialize(tbsCertificate));
  const signature = sign('sha256', tbs, { key: signer.key, dsaEncoding: 'der' });
  const cert = new Certificate({
    tbsCertificate,
    signatureAlgorithm: ecdsaWithSha256(),
    signatureValue: signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.byteLength),
  });
  const der = Buffer.from(AsnConvert.serialize(cert));
  return {
    certPem: toPem('CERTIFICATE', der),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** PEM armour: base64 in 64-character lines (RFC 7468). */
export function toPem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
