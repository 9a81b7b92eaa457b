/** Names and v3 extensions of the certificates `issueCertificate` builds (RFC 5280 4.1.2.4, 4.2.1). */
import { isIPv4, isIPv6 } from 'node:net';
import { boolean, explicit, ia5String, implicit, namedBits, octetString, oid, sequence, set, utf8String } from './der.js';

export type CertificateUsage = 'ca' | 'server' | 'client' | 'server-client';

/** A Name: one RDN per organization (O), then the common name (CN), all UTF8String. */
export function distinguishedName(commonName: string, organizations: readonly string[] = []): Buffer {
  const rdn = (type: string, value: string): Buffer => set(sequence(oid(type), utf8String(value)));
  return sequence(...organizations.map((o) => rdn('2.5.4.10', o)), rdn('2.5.4.3', commonName));
}

/** The 4 or 16 octets of an IPv4 or IPv6 address (zone ids are refused), or undefined when it is not one. */
export function ipAddressBytes(ip: string): Buffer | undefined {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip) || ip.includes('%')) return undefined;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  const text = v4
    ? `${ip.slice(0, v4.index)}${((Number(v4[1]) << 8) | Number(v4[2])).toString(16)}:${((Number(v4[3]) << 8) | Number(v4[4])).toString(16)}`
    : ip;
  const [head = '', tail] = text.split('::');
  const groups = (part: string): string[] => (part ? part.split(':') : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const bytes = Buffer.alloc(16);
  all.forEach((g, i) => bytes.writeUInt16BE(parseInt(g, 16), i * 2));
  return bytes;
}

const LABEL = '[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const DNS_NAME = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})*$`);

/** A host name fit for a dNSName SAN: ASCII labels, an optional leading `*.` wildcard, at most 253 chars. */
export function isDnsName(name: string): boolean {
  return name.length <= 253 && DNS_NAME.test(name);
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

const KEY_USAGE_BIT = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const PURPOSES: Record<Exclude<CertificateUsage, 'ca'>, readonly string[]> = {
  server: [SERVER_AUTH],
  client: [CLIENT_AUTH],
  'server-client': [SERVER_AUTH, CLIENT_AUTH],
};

export interface ExtensionInput {
  usage: CertificateUsage;
  dnsNames: readonly string[];
  /** Already encoded as 4 or 16 octets each. */
  ipAddresses: readonly Buffer[];
  subjectKeyId: Buffer;
  authorityKeyId: Buffer;
}

/** The `[3] EXPLICIT Extensions` field of a TBSCertificate. */
export function extensions(input: ExtensionInput): Buffer {
  const ca = input.usage === 'ca';
  const bits = ca
    ? [KEY_USAGE_BIT.digitalSignature, KEY_USAGE_BIT.keyCertSign, KEY_USAGE_BIT.cRLSign]
    : [KEY_USAGE_BIT.digitalSignature, KEY_USAGE_BIT.keyEncipherment];
  const list = [
    extension('2.5.29.19', true, sequence(...(ca ? [boolean(true)] : []))), // basicConstraints
    extension('2.5.29.15', true, namedBits(bits)), // keyUsage
  ];
  if (input.usage !== 'ca') {
    const purposes = PURPOSES[input.usage];
    list.push(extension('2.5.29.37', false, sequence(...purposes.map(oid)))); // extKeyUsage
  }
  const names = [
    ...input.dnsNames.map((n) => implicit(2, ia5String(n))), // dNSName [2]
    ...input.ipAddresses.map((ip) => implicit(7, octetString(ip))), // iPAddress [7]
  ];
  if (names.length) list.push(extension('2.5.29.17', false, sequence(...names))); // subjectAltName
  list.push(extension('2.5.29.14', false, octetString(input.subjectKeyId))); // subjectKeyIdentifier
  list.push(extension('2.5.29.35', false, sequence(implicit(0, octetString(input.authorityKeyId))))); // authorityKeyIdentifier
  return explicit(3, sequence(...list));
}
