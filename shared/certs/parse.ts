/**
 * The few fields of an existing certificate that issuing and inspecting need, read straight from its
 * DER with `readTlv` (node:crypto's X509Certificate gives the subject only as text, not as the exact
 * bytes an issuer name must repeat).
 */
import { createHash } from 'node:crypto';
import { oid, readAll, readTime, readTlv, Tag, type Tlv } from './der.js';
import { DerDecodeError } from './errors.js';

export interface CertificateFields {
  /** The issuer Name, the whole SEQUENCE TLV exactly as encoded. */
  issuer: Buffer;
  /** The subject Name, the whole SEQUENCE TLV exactly as encoded. */
  subject: Buffer;
  notBefore: Date;
  notAfter: Date;
  /** The SubjectPublicKeyInfo TLV. */
  spki: Buffer;
  /** The subjectKeyIdentifier extension's key id, when the certificate has one. */
  subjectKeyId: Buffer | undefined;
}

const SUBJECT_KEY_ID = oid('2.5.29.14');

function expect(item: Tlv | undefined, tag: number, what: string): Tlv {
  if (!item || item.tag !== tag) {
    throw new DerDecodeError(`certificate ${what}: expected tag 0x${tag.toString(16)}, found ${item ? `0x${item.tag.toString(16)}` : 'nothing'}`);
  }
  return item;
}

function findSubjectKeyId(extensionsField: Tlv | undefined): Buffer | undefined {
  if (!extensionsField) return undefined;
  const list = expect(readTlv(extensionsField.content), Tag.sequence, 'extensions');
  for (const ext of readAll(list.content)) {
    const parts = readAll(expect(ext, Tag.sequence, 'extension').content);
    if (!parts[0]?.raw.equals(SUBJECT_KEY_ID)) continue;
    const value = expect(parts.at(-1), Tag.octetString, 'subjectKeyIdentifier');
    return Buffer.from(expect(readTlv(value.content), Tag.octetString, 'subjectKeyIdentifier').content);
  }
  return undefined;
}

/** Read a DER certificate (RFC 5280 4.1); throws DerDecodeError when its structure is not a certificate. */
export function parseCertificate(der: Buffer): CertificateFields {
  const cert = expect(readTlv(der), Tag.sequence, 'outer SEQUENCE');
  const tbs = expect(readAll(cert.content)[0], Tag.sequence, 'tbsCertificate');
  const fields = readAll(tbs.content);
  const at = fields[0]?.tag === 0xa0 ? 1 : 0; // [0] EXPLICIT version, absent for v1
  const validity = readAll(expect(fields[at + 3], Tag.sequence, 'validity').content);
  const [notBefore, notAfter] = validity;
  if (!notBefore || !notAfter || validity.length !== 2) throw new DerDecodeError('certificate validity: expected two times');
  return {
    issuer: Buffer.from(expect(fields[at + 2], Tag.sequence, 'issuer').raw),
    subject: Buffer.from(expect(fields[at + 4], Tag.sequence, 'subject').raw),
    notBefore: readTime(notBefore),
    notAfter: readTime(notAfter),
    spki: Buffer.from(expect(fields[at + 5], Tag.sequence, 'subjectPublicKeyInfo').raw),
    subjectKeyId: findSubjectKeyId(fields.slice(at + 6).find((f) => f.tag === 0xa3)),
  };
}

/** RFC 5280 4.2.1.2 method (1): SHA-1 of the subjectPublicKey BIT STRING value (without unused-bits octet). */
export function keyIdentifier(spki: Buffer): Buffer {
  const [, key] = readAll(expect(readTlv(spki), Tag.sequence, 'subjectPublicKeyInfo').content);
  const bits = expect(key, Tag.bitString, 'subjectPublicKey');
  return createHash('sha1').update(bits.content.subarray(1)).digest();
}
