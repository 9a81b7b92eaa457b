/**
 * Registry credentials from a `.dockerconfigjson` file and the two challenges of the distribution
 * spec: Basic (send the credentials) and Bearer (fetch a token from the realm, with the credentials
 * when there are some).
 */
import { readFileSync } from 'node:fs';
import { ValidationError } from '../errors/index.js';

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

/** The credentials for `registry` in a dockerconfigjson file (`auths.<host>.auth` or username/password). */
export function credentialsFromDockerConfig(path: string, registry: string): Credentials | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err: unknown) {
    throw new ValidationError('invalid docker config', [{ path, message: `not readable JSON: ${err instanceof Error ? err.message : String(err)}` }], {
      cause: err,
    });
  }
  const auths = (doc as { auths?: Record<string, { auth?: string; username?: string; password?: string }> }).auths ?? {};
  const entry = auths[registry] ?? auths[`https://${registry}`] ?? auths[`http://${registry}`];
  if (entry === undefined) return undefined;
  if (entry.username !== undefined && entry.password !== undefined) return { username: entry.username, password: entry.password };
  if (entry.auth === undefined) return undefined;
  const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new ValidationError('invalid docker config', [{ path: `auths.${registry}.auth`, message: 'must be base64 of user:password' }]);
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export interface Challenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/** Parse `Bearer realm="https://auth",service="registry",scope="repository:x:pull"`. */
export function parseChallenge(header: string): Challenge {
  const space = header.indexOf(' ');
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const params: Record<string, string> = {};
  for (const m of header.slice(space + 1).matchAll(/([A-Za-z]+)="([^"]*)"/g)) params[(m[1] ?? '').toLowerCase()] = m[2] ?? '';
  return { scheme, params };
}

export function basicHeader(creds: Credentials): string {
  return `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`;
}
