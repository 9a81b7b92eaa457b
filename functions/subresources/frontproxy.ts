/**
 * Who is calling: the kube-apiserver's aggregator, proven by its front-proxy client certificate,
 * speaking for the user named in its request headers. The CA, the allowed certificate names and the
 * header names come from the ConfigMap kube-system/extension-apiserver-authentication that the
 * apiserver publishes (its `--requestheader-*` flags), exactly as every aggregated apiserver reads them.
 */
import { X509Certificate } from 'node:crypto';

export const AUTH_CONFIGMAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication' } as const;

/** What the ConfigMap says about the front proxy. */
export interface RequestHeaderConfig {
  readonly cas: readonly X509Certificate[];
  /** Common names a front-proxy certificate may carry; empty: any certificate of the CA. */
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly uidHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
}

/** The user the aggregator vouches for. */
export interface RemoteUser {
  readonly name: string;
  readonly uid: string | undefined;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, string[]>>;
}

export type Authentication = { readonly ok: true; readonly user: RemoteUser } | { readonly ok: false; readonly reason: string };

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_USAGE = '2.5.29.37.0';

/** Parse the ConfigMap's data; a missing or broken key is an error naming it (nothing is trusted then). */
export function parseRequestHeaderConfig(data: Readonly<Record<string, string>> | undefined): RequestHeaderConfig {
  const caPem = data?.['requestheader-client-ca-file'];
  if (caPem === undefined || caPem.trim() === '') {
    throw new Error(
      `${AUTH_CONFIGMAP.namespace}/${AUTH_CONFIGMAP.name} has no requestheader-client-ca-file: the apiserver runs without --requestheader-client-ca-file (no aggregation layer)`,
    );
  }
  const cas = splitPem(caPem).map((pem, i) => {
    try {
      return new X509Certificate(pem);
    } catch (err: unknown) {
      throw new Error(`requestheader-client-ca-file: certificate ${i + 1} does not parse: ${(err as Error).message}`, { cause: err });
    }
  });
  if (cas.length === 0) throw new Error('requestheader-client-ca-file holds no PEM certificate');
  const list = (key: string): string[] => {
    const text = data?.[key];
    if (text === undefined || text.trim() === '') return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${key} is not a JSON list of strings: ${JSON.stringify(text.slice(0, 80))}`);
    }
    if (!Array.isArray(parsed) || !parsed.every((v): v is string => typeof v === 'string')) throw new Error(`${key} is not a JSON list of strings`);
    return parsed;
  };
  const usernameHeaders = list('requestheader-username-headers');
  if (usernameHeaders.length === 0) throw new Error('requestheader-username-headers is empty: no header can name the user');
  return {
    cas,
    allowedNames: list('requestheader-allowed-names'),
    usernameHeaders,
    uidHeaders: list('requestheader-uid-headers'),
    groupHeaders: list('requestheader-group-headers'),
    extraHeaderPrefixes: list('requestheader-extra-headers-prefix'),
  };
}

function splitPem(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/**
 * Check the client certificate (issued and signed by one of the CAs, valid now, usable for client
 * authentication, an allowed common name) and read the user from the headers. Headers are matched
 * case-insensitively; every value of a repeated group header is a group.
 */
export function authenticate(
  config: RequestHeaderConfig,
  cert: X509Certificate | undefined,
  headers: Readonly<Record<string, string[] | undefined>>,
  now: Date = new Date(),
): Authentication {
  if (cert === undefined) return { ok: false, reason: 'no client certificate: only the kube-apiserver aggregator (front-proxy certificate) may call this API' };
  const issuer = config.cas.find((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey));
  if (issuer === undefined) return { ok: false, reason: `client certificate ${commonName(cert) ?? cert.subject} is not signed by the front-proxy CA` };
  if (Date.parse(cert.validFrom) > now.getTime() || Date.parse(cert.validTo) < now.getTime()) {
    return { ok: false, reason: `client certificate ${commonName(cert) ?? ''} is not valid now (valid ${cert.validFrom} to ${cert.validTo})` };
  }
  const usages = cert.keyUsage as string[] | undefined;
  if (usages !== undefined && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_USAGE)) {
    return { ok: false, reason: 'client certificate is not for client authentication (extended key usage)' };
  }
  const cn = commonName(cert);
  if (config.allowedNames.length > 0 && (cn === undefined || !config.allowedNames.includes(cn))) {
    return { ok: false, reason: `client certificate name ${JSON.stringify(cn ?? '')} is not one of the allowed front-proxy names` };
  }
  const values = (name: string): string[] => headers[name.toLowerCase()] ?? [];
  const name = config.usernameHeaders.map((h) => values(h).find((v) => v !== '')).find((v) => v !== undefined);
  if (name === undefined) return { ok: false, reason: `no user in the request headers (${config.usernameHeaders.join(', ')})` };
  const uid = config.uidHeaders.map((h) => values(h).find((v) => v !== '')).find((v) => v !== undefined);
  const groups = config.groupHeaders.flatMap(values);
  const extra: Record<string, string[]> = {};
  for (const prefix of config.extraHeaderPrefixes.map((p) => p.toLowerCase())) {
    for (const [header, vals] of Object.entries(headers)) {
      if (!header.startsWith(prefix) || vals === undefined) continue;
      const key = safeDecode(header.slice(prefix.length));
      extra[key] = [...(extra[key] ?? []), ...vals];
    }
  }
  return { ok: true, user: { name, uid, groups, extra } };
}

function commonName(cert: X509Certificate): string | undefined {
  return cert.subject
    .split('\n')
    .find((line) => line.startsWith('CN='))
    ?.slice(3);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
