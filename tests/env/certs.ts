import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const run = promisify(execFile);

/** A certificate authority on disk: PEM cert and key paths. */
export interface CertAuthority {
  name: string;
  certPath: string;
  keyPath: string;
}

/** A leaf certificate on disk, signed by a CertAuthority. */
export interface LeafCert {
  certPath: string;
  keyPath: string;
}

async function openssl(args: string[], step: string): Promise<void> {
  try {
    await run('openssl', args, { timeout: 30_000 });
  } catch (err: unknown) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`openssl failed while ${step}: ${stderr.trim() || String(err)}`, { cause: err });
  }
}

/** Create a self-signed ECDSA P-256 CA valid for a week, written as DIR/NAME-ca.{crt,key}. */
export async function createCA(dir: string, name: string): Promise<CertAuthority> {
  await mkdir(dir, { recursive: true });
  const certPath = join(dir, `${name}-ca.crt`);
  const keyPath = join(dir, `${name}-ca.key`);
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-nodes',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '7',
      '-subj',
      `/CN=${name}-ca/O=virt-testenv`,
    ],
    `creating CA ${name}`,
  );
  return { name, certPath, keyPath };
}

export interface LeafOptions {
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses for a serving certificate. */
  dnsNames?: string[];
  ipAddresses?: string[];
  usage: 'server' | 'client';
}

/** Issue an ECDSA leaf certificate signed by `ca`, written as DIR/FILE.{crt,key}. */
export async function issueCert(ca: CertAuthority, dir: string, file: string, opts: LeafOptions): Promise<LeafCert> {
  await mkdir(dir, { recursive: true });
  const certPath = join(dir, `${file}.crt`);
  const keyPath = join(dir, `${file}.key`);
  const csrPath = join(dir, `${file}.csr`);
  const extPath = join(dir, `${file}.ext`);
  const subject = `/CN=${opts.commonName}${(opts.organizations ?? []).map((o) => `/O=${o}`).join('')}`;
  const sans = [...(opts.dnsNames ?? []).map((d) => `DNS:${d}`), ...(opts.ipAddresses ?? []).map((i) => `IP:${i}`)];
  const ext = [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    `extendedKeyUsage=${opts.usage === 'server' ? 'serverAuth' : 'clientAuth'}`,
    ...(sans.length > 0 ? [`subjectAltName=${sans.join(',')}`] : []),
  ];
  await writeFile(extPath, ext.join('\n') + '\n');
  await openssl(
    ['req', '-new', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-keyout', keyPath, '-out', csrPath, '-subj', subject],
    `creating the key and CSR for ${file}`,
  );
  // A random serial per certificate, not a serial file beside the CA: certificates of one CA are signed
  // concurrently, and openssl's read-increment-write of `<ca>.srl` then fails ("Unable to load number").
  const serial = `0x${randomBytes(16).toString('hex')}`;
  await openssl(
    ['x509', '-req', '-in', csrPath, '-CA', ca.certPath, '-CAkey', ca.keyPath, '-set_serial', serial, '-out', certPath, '-days', '7', '-extfile', extPath],
    `signing ${file} with CA ${ca.name}`,
  );
  return { certPath, keyPath };
}

/** An EC private key (used as the service-account signing key). */
export async function createKey(path: string): Promise<void> {
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', path], 'creating a signing key');
}
