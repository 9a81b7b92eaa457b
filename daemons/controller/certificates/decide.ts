/**
 * The certificate manager's decisions as pure functions of what the Secrets hold and the time: keep a
 * CA or make a new one, keep a serving certificate or issue a new one, and which CA certificates the
 * trust bundle carries. No I/O here; manager.ts reads and writes.
 */
import { X509Certificate } from 'node:crypto';
import { inspectPair, issueCertificate, renewAt } from '../../../shared/certs/index.js';

export interface CertPolicy {
  readonly caValidityMs: number;
  readonly servingValidityMs: number;
  /** Renew once this fraction of a certificate's lifetime has passed (e.g. 2/3). */
  readonly renewFraction: number;
  /**
   * After a new CA, certificates of the previous one are replaced only once the new CA has been in
   * the trust bundles this long, so every apiserver trusts it before anything signed by it is served.
   */
  readonly caOverlapMs: number;
}

export interface KeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface Stored {
  readonly certPem: string | undefined;
  readonly keyPem: string | undefined;
  /** A rotation was asked for (the rotate annotation). */
  readonly rotate: boolean;
}

/** Keep what is stored (`why` undefined), or a new pair and why the old one was not kept. */
export interface Decision {
  readonly pair: KeyPair;
  readonly why: string | undefined;
  /** The stored material was unusable (not merely due): worth a Warning event. */
  readonly broken: boolean;
  /** Kept for now, but to be looked at again at this time (a certificate of the previous CA). */
  readonly recheckAt?: Date;
}

const CLOCK_SKEW_MS = 5 * 60_000;

/** Whether a sound pair has reached its renewal time. */
function due(certPem: string, now: Date, fraction: number): boolean {
  const cert = new X509Certificate(certPem);
  return now.getTime() >= renewAt(new Date(cert.validFrom), new Date(cert.validTo), fraction).getTime();
}

export function decideCa(stored: Stored, now: Date, policy: CertPolicy, commonName: string): Decision {
  const fresh = (why: string, broken: boolean): Decision => ({
    pair: issueCertificate({
      commonName,
      usage: 'ca',
      notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
      notAfter: new Date(now.getTime() + policy.caValidityMs),
    }),
    why,
    broken,
  });
  if (stored.certPem === undefined || stored.keyPem === undefined) return fresh('no CA yet', false);
  const check = inspectPair({ certPem: stored.certPem, keyPem: stored.keyPem, now });
  if (!check.ok) return fresh(`the stored CA is unusable: ${check.reason}`, true);
  if (!new X509Certificate(stored.certPem).ca) return fresh('the stored CA certificate is not a CA', true);
  if (stored.rotate) return fresh('rotation requested', false);
  if (due(stored.certPem, now, policy.renewFraction)) return fresh('the CA is due for renewal', false);
  return { pair: { certPem: stored.certPem, keyPem: stored.keyPem }, why: undefined, broken: false };
}

export interface ServingTarget {
  /** The Service name; the certificate covers its in-cluster DNS names. */
  readonly service: string;
  readonly namespace: string;
}

export function dnsNamesOf(t: ServingTarget): string[] {
  const { service: s, namespace: ns } = t;
  return [s, `${s}.${ns}`, `${s}.${ns}.svc`, `${s}.${ns}.svc.cluster.local`];
}

/** A leaf certificate to keep issued: a Service's serving certificate or a client certificate. */
export interface LeafTarget {
  readonly commonName: string;
  readonly dnsNames: readonly string[];
  readonly usage: 'server' | 'client';
}

export const servingLeaf = (t: ServingTarget): LeafTarget => ({ commonName: `${t.service}.${t.namespace}.svc`, dnsNames: dnsNamesOf(t), usage: 'server' });

/** A client certificate (usage clientAuth) with this common name, the identity a peer sees. */
export const clientLeaf = (commonName: string): LeafTarget => ({ commonName, dnsNames: [], usage: 'client' });

export function decideLeaf(stored: Stored, ca: KeyPair, leaf: LeafTarget, now: Date, policy: CertPolicy): Decision {
  const fresh = (why: string, broken: boolean): Decision => {
    const caCert = new X509Certificate(ca.certPem);
    // A leaf never outlives its CA.
    const notAfter = Math.min(now.getTime() + policy.servingValidityMs, new Date(caCert.validTo).getTime());
    const pair = issueCertificate({
      commonName: leaf.commonName,
      ...(leaf.dnsNames.length === 0 ? {} : { dnsNames: [...leaf.dnsNames] }),
      usage: leaf.usage,
      notBefore: new Date(Math.max(now.getTime() - CLOCK_SKEW_MS, new Date(caCert.validFrom).getTime())),
      notAfter: new Date(notAfter),
      issuer: ca,
    });
    return { pair, why, broken };
  };
  if (stored.certPem === undefined || stored.keyPem === undefined) return fresh('no certificate yet', false);
  // A serving certificate must cover the Service's name; a client certificate must carry its name.
  const dnsName = leaf.usage === 'server' ? leaf.commonName : undefined;
  const named = (): boolean => leaf.usage === 'server' || new X509Certificate(stored.certPem!).subject.split('\n').includes(`CN=${leaf.commonName}`);
  const check = inspectPair({ certPem: stored.certPem, keyPem: stored.keyPem, caPem: ca.certPem, now, ...(dnsName === undefined ? {} : { dnsName }) });
  if (!check.ok) {
    // Sound on its own but not from this CA: an older CA of ours, routine after a CA rotation. It
    // stays until the new CA has been trusted for the overlap.
    const byOtherCa = inspectPair({ certPem: stored.certPem, keyPem: stored.keyPem, now, ...(dnsName === undefined ? {} : { dnsName }) }).ok;
    if (!byOtherCa || !named()) return fresh(`the stored certificate is unusable: ${check.reason}`, true);
    const trustedFrom = new Date(new X509Certificate(ca.certPem).validFrom).getTime() + CLOCK_SKEW_MS + policy.caOverlapMs;
    if (now.getTime() >= trustedFrom || stored.rotate) return fresh('signed by a previous CA', false);
    return { pair: { certPem: stored.certPem, keyPem: stored.keyPem }, why: undefined, broken: false, recheckAt: new Date(trustedFrom) };
  }
  if (!named()) return fresh(`the stored certificate does not name ${leaf.commonName}`, true);
  if (stored.rotate) return fresh('rotation requested', false);
  if (due(stored.certPem, now, policy.renewFraction)) return fresh('the certificate is due for renewal', false);
  return { pair: { certPem: stored.certPem, keyPem: stored.keyPem }, why: undefined, broken: false };
}

/**
 * The CA bundle to trust: the current CA first, then every other CA certificate found in `previous`
 * (old bundles) that is still valid, so that certificates issued by the previous CA keep working
 * until they are replaced and reloaded. Duplicates and garbage are dropped.
 */
export function trustBundle(currentCaPem: string, previous: readonly (string | undefined)[], now: Date): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const pem of [currentCaPem, ...previous.flatMap((p) => splitPem(p ?? ''))]) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pem);
    } catch {
      continue;
    }
    if (!cert.ca || seen.has(cert.fingerprint256) || new Date(cert.validTo).getTime() <= now.getTime()) continue;
    seen.add(cert.fingerprint256);
    out.push(cert.toString().trim());
  }
  return out.join('\n') + '\n';
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

export function splitPem(text: string): string[] {
  return text.match(PEM_BLOCK) ?? [];
}

/** When the earliest of these certificates is due for renewal. */
export function nextRenewal(certPems: readonly string[], fraction: number): Date | undefined {
  let next: number | undefined;
  for (const pem of certPems) {
    const cert = new X509Certificate(pem);
    const at = renewAt(new Date(cert.validFrom), new Date(cert.validTo), fraction).getTime();
    next = next === undefined ? at : Math.min(next, at);
  }
  return next === undefined ? undefined : new Date(next);
}

/** The key of a shared secret in its Secret, its length when made, and the least a reader accepts (the USB/IP handshake's minimum). */
export const SHARED_SECRET_KEY = 'secret';
export const SHARED_SECRET_BYTES = 48;
const SHARED_SECRET_MIN_BYTES = 32;

/** What the decision reads of a shared secret's Secret. */
export interface StoredShared {
  readonly exists: boolean;
  readonly type?: string | undefined;
  /** The base64 value under SHARED_SECRET_KEY. */
  readonly value?: string | undefined;
  readonly rotate: boolean;
}

/** Why a shared secret must be (re)made, or undefined when it is sound. */
export function sharedSecretProblem(s: StoredShared): string | undefined {
  if (!s.exists) return 'missing';
  if (s.type !== undefined && s.type !== 'Opaque') return `type ${s.type}, not Opaque`;
  if (s.rotate) return 'rotation asked';
  if (s.value === undefined) return `no key ${SHARED_SECRET_KEY}`;
  const bytes = Buffer.from(s.value, 'base64').length;
  return bytes < SHARED_SECRET_MIN_BYTES ? `${bytes} bytes, fewer than ${SHARED_SECRET_MIN_BYTES}` : undefined;
}
