/**
 * The few fields of an existing certificate that issuing and inspecting need, decoded with
 * @peculiar/asn1-x509 (node:crypto's X509Certificate gives the subject only as text, not as the Name
 * an issuer field must repeat).
 */
import { createHash } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate, id_ce_subjectKeyIdentifier, SubjectKeyIdentifier, type Name } from '@peculiar/asn1-x509';
import { errorMessage } from '../errors/index.js';
import { DerDecodeError } from './errors.js';

export interface CertificateFields {
  /** The issuer Name, DER. */
  issuer: Buffer;
  /** The subject Name, DER. */
  subject: Buffer;
  /** The subject Name, to be the issuer of the certificates this one signs. */
  subjectName: Name;
  notBefore: Date;
  notAfter: Date;
  /** The subjectPublicKey BIT STRING's bytes. */
  publicKey: ArrayBuffer;
  /** The subjectKeyIdentifier extension's key id, when the certificate has one. */
  subjectKeyId: Buffer | undefined;
}

function decode<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (err: unknown) {
    throw new DerDecodeError(`${what}: ${errorMessage(err)}`);
  }
}

/** Read a DER certificate (RFC 5280 4.1); throws DerDecodeError when its structure is not a certificate. */
export function parseCertificate(der: Buffer): CertificateFields {
  const { tbsCertificate: tbs } = decode('certificate', () => AsnConvert.parse(der, Certificate));
  const ski = tbs.extensions?.find((e) => e.extnID === id_ce_subjectKeyIdentifier);
  return {
    issuer: Buffer.from(AsnConvert.serialize(tbs.issuer)),
    subject: Buffer.from(AsnConvert.serialize(tbs.subject)),
    subjectName: tbs.subject,
    notBefore: tbs.validity.notBefore.getTime(),
    notAfter: tbs.validity.notAfter.getTime(),
    publicKey: tbs.subjectPublicKeyInfo.subjectPublicKey,
    subjectKeyId: ski && Buffer.from(decode('subjectKeyIdentifier', () => AsnConvert.parse(ski.extnValue, SubjectKeyIdentifier)).buffer),
  };
}

/** RFC 5280 4.2.1.2 method (1): SHA-1 of the subjectPublicKey BIT STRING value (without unused-bits octet). */
export function keyIdentifier(publicKey: ArrayBuffer): Buffer {
  return createHash('sha1').update(Buffer.from(publicKey)).digest();
}
