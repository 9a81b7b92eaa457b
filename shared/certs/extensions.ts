/** Names and v3 extensions of the certificates `issueCertificate` builds (RFC 5280 4.1.2.4, 4.2.1). */
import { isIPv4, isIPv6 } from 'node:net';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AttributeTypeAndValue,
  AttributeValue,
  AuthorityKeyIdentifier,
  BasicConstraints,
  ExtendedKeyUsage,
  Extension,
  Extensions,
  GeneralName,
  id_ce_authorityKeyIdentifier,
  id_ce_basicConstraints,
  id_ce_extKeyUsage,
  id_ce_keyUsage,
  id_ce_subjectAltName,
  id_ce_subjectKeyIdentifier,
  id_kp_clientAuth,
  id_kp_serverAuth,
  KeyIdentifier,
  KeyUsage,
  KeyUsageFlags,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectKeyIdentifier,
} from '@peculiar/asn1-x509';

export type CertificateUsage = 'ca' | 'server' | 'client' | 'server-client';

const ORGANIZATION = '2.5.4.10';
const COMMON_NAME = '2.5.4.3';

/** A Name: one RDN per organization (O), then the common name (CN), all UTF8String. */
export function distinguishedName(commonName: string, organizations: readonly string[] = []): Name {
  const rdn = (type: string, value: string): RelativeDistinguishedName =>
    new RelativeDistinguishedName([new AttributeTypeAndValue({ type, value: new AttributeValue({ utf8String: value }) })]);
  return new Name([...organizations.map((o) => rdn(ORGANIZATION, o)), rdn(COMMON_NAME, commonName)]);
}

/** Whether `ip` is an IPv4 or IPv6 literal a certificate can carry (zone ids are refused). */
export function isIpAddress(ip: string): boolean {
  return isIPv4(ip) || (isIPv6(ip) && !ip.includes('%'));
}

/**
 * An IPv6 literal with an embedded IPv4 tail (`fd00::ffff:10.0.0.1`) written with hex groups only
 * (`fd00::ffff:a00:1`): @peculiar/asn1-x509's converter misreads the dotted tail. Other input as is.
 */
export function hexGroups(ip: string): string {
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (!isIPv6(ip) || !v4) return ip;
  const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
  return `${ip.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

const LABEL = '[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const DNS_NAME = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})*$`);

/** A host name fit for a dNSName SAN: ASCII labels, an optional leading `*.` wildcard, at most 253 chars. */
export function isDnsName(name: string): boolean {
  return name.length <= 253 && DNS_NAME.test(name);
}

function extension(extnID: string, critical: boolean, value: object): Extension {
  return new Extension({ extnID, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });
}

const PURPOSES: Record<Exclude<CertificateUsage, 'ca'>, readonly string[]> = {
  server: [id_kp_serverAuth],
  client: [id_kp_clientAuth],
  'server-client': [id_kp_serverAuth, id_kp_clientAuth],
};

export interface ExtensionInput {
  usage: CertificateUsage;
  dnsNames: readonly string[];
  /** Checked with `isIpAddress`. */
  ipAddresses: readonly string[];
  subjectKeyId: Buffer;
  authorityKeyId: Buffer;
}

/** The Extensions of a TBSCertificate. */
export function extensions(input: ExtensionInput): Extensions {
  const ca = input.usage === 'ca';
  const { digitalSignature, keyEncipherment, keyCertSign, cRLSign } = KeyUsageFlags;
  const list = [
    extension(id_ce_basicConstraints, true, new BasicConstraints({ cA: ca })),
    extension(id_ce_keyUsage, true, new KeyUsage(ca ? digitalSignature | keyCertSign | cRLSign : digitalSignature | keyEncipherment)),
  ];
  if (input.usage !== 'ca') list.push(extension(id_ce_extKeyUsage, false, new ExtendedKeyUsage([...PURPOSES[input.usage]])));
  const names = [
    ...input.dnsNames.map((dNSName) => new GeneralName({ dNSName })),
    ...input.ipAddresses.map((ip) => new GeneralName({ iPAddress: hexGroups(ip) })),
  ];
  if (names.length) list.push(extension(id_ce_subjectAltName, false, new SubjectAlternativeName(names)));
  list.push(extension(id_ce_subjectKeyIdentifier, false, new SubjectKeyIdentifier(input.subjectKeyId)));
  list.push(extension(id_ce_authorityKeyIdentifier, false, new AuthorityKeyIdentifier({ keyIdentifier: new KeyIdentifier(input.authorityKeyId) })));
  return new Extensions(list);
}
