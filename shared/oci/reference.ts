/**
 * Image references as the importer is given them: `[http://|https://]host[:port]/repo/path[:tag][@sha256:...]`.
 * The scheme prefix is ours (a registry on plain HTTP, as DVCR on loopback in tests); without one, HTTPS.
 * A reference without a registry host (`debian:12`) means Docker Hub, as docker does.
 */
import { ValidationError } from '../errors/index.js';

export interface ImageReference {
  /** `http:` or `https:` */
  readonly scheme: 'http' | 'https';
  /** host[:port] as used in URLs */
  readonly registry: string;
  readonly repository: string;
  /** a tag or a digest (`sha256:...`) */
  readonly reference: string;
}

const REPO = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export function parseImageReference(text: string): ImageReference {
  const bad = (message: string): never => {
    throw new ValidationError('invalid image reference', [{ path: '', message: `${JSON.stringify(text)}: ${message}` }]);
  };
  let rest = text.trim();
  let scheme: 'http' | 'https' = 'https';
  const schemeMatch = /^(https?):\/\//.exec(rest);
  if (schemeMatch) {
    scheme = schemeMatch[1] as 'http' | 'https';
    rest = rest.slice(schemeMatch[0].length);
  } else if (/^[a-z]+:\/\//i.test(rest)) bad('only http:// and https:// prefixes are known');
  let reference = 'latest';
  const at = rest.indexOf('@');
  if (at >= 0) {
    reference = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(reference)) bad('the digest must be sha256:<64 hex digits>');
  }
  const slash = rest.indexOf('/');
  const first = slash >= 0 ? rest.slice(0, slash) : '';
  let registry = 'registry-1.docker.io';
  let path = rest;
  if (slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    registry = first;
    path = rest.slice(slash + 1);
  } else if (slash < 0) {
    path = `library/${rest}`;
  }
  const colon = path.lastIndexOf(':');
  if (colon >= 0) {
    if (at >= 0) bad('give a tag or a digest, not both');
    reference = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!TAG.test(reference)) bad('the tag must be 1-128 letters, digits, "_", "." or "-"');
  }
  if (!REPO.test(path)) bad('the repository must be lowercase path components');
  return { scheme, registry, repository: path, reference };
}

export function formatImageReference(ref: ImageReference): string {
  const sep = ref.reference.startsWith('sha256:') ? '@' : ':';
  return `${ref.registry}/${ref.repository}${sep}${ref.reference}`;
}
