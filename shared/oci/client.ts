/**
 * A small OCI distribution client: manifests and blobs in and out, bodies streamed, and the listing
 * and deletion DVCR's garbage collection needs (catalog, tags, manifest delete by digest). Enough for
 * the importer and the controller; not a general registry tool.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { ProtocolError, UnavailableError } from '../errors/index.js';
import { basicHeader, parseChallenge, type Credentials } from './auth.js';
import { readBody, send, type RequestOptions, type Response, type TlsOptions } from './http.js';
import type { ImageReference } from './reference.js';

export const MEDIA = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayerTar: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
} as const;

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly platform?: { readonly os?: string; readonly architecture?: string };
}

export interface Manifest {
  readonly schemaVersion: number;
  readonly mediaType?: string;
  readonly config?: Descriptor;
  readonly layers?: readonly Descriptor[];
  readonly manifests?: readonly Descriptor[];
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The registry answered with an error status; `status` is what it said. */
export class RegistryError extends UnavailableError {}

export interface RegistryClientOptions {
  readonly credentials?: Credentials | undefined;
  readonly tls?: TlsOptions | undefined;
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

export class RegistryClient {
  private authorization: string | undefined;

  constructor(
    readonly ref: ImageReference,
    private readonly opts: RegistryClientOptions = {},
  ) {}

  private url(path: string): string {
    return `${this.ref.scheme}://${this.ref.registry}/v2/${this.ref.repository}/${path}`;
  }

  /** One request with authentication: on 401 answer the challenge once and retry (bodies must be replayable). */
  private async request(
    url: string,
    opts: RequestOptions,
    actions: 'pull' | 'pull,push' | 'delete',
    scope = `repository:${this.ref.repository}:${actions}`,
  ): Promise<Response> {
    const call = (): Promise<Response> =>
      send(url, {
        ...opts,
        tls: this.opts.tls,
        timeoutMs: this.opts.timeoutMs,
        signal: this.opts.signal,
        headers: { ...opts.headers, ...(this.authorization !== undefined ? { authorization: this.authorization } : {}) },
      });
    const res = await call();
    if (res.status !== 401 || (opts.body !== undefined && !Buffer.isBuffer(opts.body))) return res;
    res.body.resume();
    await this.authenticate(res.headers['www-authenticate'], scope);
    return call();
  }

  private async authenticate(header: string | undefined, scope: string): Promise<void> {
    const creds = this.opts.credentials;
    const challenge = header === undefined ? undefined : parseChallenge(header);
    if (challenge?.scheme === 'bearer' && challenge.params['realm'] !== undefined) {
      const tokenUrl = new URL(challenge.params['realm']);
      if (challenge.params['service'] !== undefined) tokenUrl.searchParams.set('service', challenge.params['service']);
      tokenUrl.searchParams.set('scope', scope);
      const res = await send(tokenUrl.toString(), {
        tls: this.opts.tls,
        timeoutMs: this.opts.timeoutMs,
        signal: this.opts.signal,
        headers: creds !== undefined ? { authorization: basicHeader(creds) } : {},
      });
      const body = await readBody(res);
      if (res.status !== 200) throw new RegistryError(`the registry's token service refused us (HTTP ${res.status})`, { upstreamStatus: res.status });
      const token = JSON.parse(body.toString('utf8')) as { token?: string; access_token?: string };
      this.authorization = `Bearer ${token.token ?? token.access_token ?? ''}`;
    } else if (creds !== undefined) {
      this.authorization = basicHeader(creds);
    } else {
      throw new RegistryError(`${this.ref.registry} asks for credentials and none were given`, { upstreamStatus: 401 });
    }
  }

  private async fail(res: Response, what: string): Promise<never> {
    const text = (await readBody(res, 64 << 10).catch(() => Buffer.alloc(0))).toString('utf8').slice(0, 300);
    throw new RegistryError(`${what}: ${this.ref.registry} answered HTTP ${res.status}${text !== '' ? ` ${text}` : ''}`, { upstreamStatus: res.status });
  }

  /** The manifest (or index) at `reference` (the reference's tag or digest by default). */
  async getManifest(reference = this.ref.reference): Promise<{ manifest: Manifest; digest: string; mediaType: string }> {
    const accept = [MEDIA.ociManifest, MEDIA.ociIndex, MEDIA.dockerManifest, MEDIA.dockerList].join(', ');
    const res = await this.request(this.url(`manifests/${reference}`), { headers: { accept } }, 'pull');
    if (res.status !== 200) return this.fail(res, `reading manifest ${this.ref.repository}:${reference}`);
    const raw = await readBody(res);
    let manifest: Manifest;
    try {
      manifest = JSON.parse(raw.toString('utf8')) as Manifest;
    } catch (err: unknown) {
      throw new ProtocolError(`the manifest of ${this.ref.repository}:${reference} is not JSON`, { cause: err });
    }
    const digest = `sha256:${createHash('sha256').update(raw).digest('hex')}`;
    const mediaType = manifest.mediaType ?? String(res.headers['content-type'] ?? MEDIA.ociManifest);
    return { manifest, digest, mediaType };
  }

  /** A blob's body, unread. */
  async getBlob(digest: string): Promise<Response> {
    const res = await this.request(this.url(`blobs/${digest}`), {}, 'pull');
    if (res.status !== 200) return this.fail(res, `reading blob ${digest}`);
    return res;
  }

  /**
   * Push a blob streamed from `body` in one PATCH (chunked), then commit it under the digest that
   * `digestOf` returns once the body is fully sent (the caller hashes while streaming).
   */
  async pushBlobStream(body: Readable, digestOf: () => string): Promise<void> {
    const location = await this.startUpload();
    const patched = await this.request(location, { method: 'PATCH', body, headers: { 'content-type': 'application/octet-stream' } }, 'pull,push');
    if (patched.status !== 202) return this.fail(patched, 'uploading a blob');
    patched.body.resume();
    const next = new URL(String(patched.headers.location ?? location), location);
    await this.commitUpload(next, digestOf());
  }

  /** Push a small blob in one request. */
  async pushBlob(data: Buffer, digest: string): Promise<void> {
    const location = await this.startUpload();
    const url = new URL(location);
    url.searchParams.set('digest', digest);
    const res = await this.request(
      url.toString(),
      { method: 'PUT', body: data, headers: { 'content-type': 'application/octet-stream', 'content-length': data.length } },
      'pull,push',
    );
    if (res.status !== 201) return this.fail(res, `committing blob ${digest}`);
    res.body.resume();
  }

  private async startUpload(): Promise<string> {
    const res = await this.request(this.url('blobs/uploads/'), { method: 'POST', body: Buffer.alloc(0), headers: { 'content-length': 0 } }, 'pull,push');
    if (res.status !== 202 || res.headers.location === undefined) return this.fail(res, 'starting a blob upload');
    res.body.resume();
    return new URL(res.headers.location, this.url('')).toString();
  }

  private async commitUpload(location: URL, digest: string): Promise<void> {
    location.searchParams.set('digest', digest);
    const res = await this.request(location.toString(), { method: 'PUT', body: Buffer.alloc(0), headers: { 'content-length': 0 } }, 'pull,push');
    if (res.status !== 201) return this.fail(res, `committing blob ${digest}`);
    res.body.resume();
  }

  /** Put a manifest under the reference's tag; returns its digest. */
  async putManifest(manifest: Manifest, mediaType: string): Promise<string> {
    const data = Buffer.from(JSON.stringify(manifest));
    const res = await this.request(
      this.url(`manifests/${this.ref.reference}`),
      { method: 'PUT', body: data, headers: { 'content-type': mediaType, 'content-length': data.length } },
      'pull,push',
    );
    if (res.status !== 201) return this.fail(res, `putting the manifest ${this.ref.repository}:${this.ref.reference}`);
    res.body.resume();
    return `sha256:${createHash('sha256').update(data).digest('hex')}`;
  }

  /**
   * Every repository of the registry (`/v2/_catalog`, followed page by page). A body that is not the
   * catalog's JSON is a ProtocolError naming the registry; an error status a RegistryError.
   */
  async listRepositories(pageSize = 1000): Promise<string[]> {
    const base = `${this.ref.scheme}://${this.ref.registry}`;
    return this.listPaged(`${base}/v2/_catalog?n=${String(pageSize)}`, 'repositories', 'registry:catalog:*', 'listing the catalog');
  }

  /** The tags of the repository (none when the registry does not know it). */
  async listTags(pageSize = 1000): Promise<string[]> {
    return this.listPaged(
      `${this.url('tags/list')}?n=${String(pageSize)}`,
      'tags',
      `repository:${this.ref.repository}:pull`,
      `listing the tags of ${this.ref.repository}`,
      true,
    );
  }

  /** The digest the registry files `reference` (a tag) under, from a HEAD of the manifest; undefined when it is gone. */
  async resolveDigest(reference = this.ref.reference): Promise<string | undefined> {
    const accept = [MEDIA.ociManifest, MEDIA.ociIndex, MEDIA.dockerManifest, MEDIA.dockerList].join(', ');
    const res = await this.request(this.url(`manifests/${reference}`), { method: 'HEAD', headers: { accept } }, 'pull');
    res.body.resume();
    if (res.status === 404) return undefined;
    if (res.status !== 200) return this.fail(res, `reading the digest of ${this.ref.repository}:${reference}`);
    const digest = res.headers['docker-content-digest'];
    if (typeof digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(digest))
      throw new ProtocolError(`${this.ref.registry} gave no usable Docker-Content-Digest for ${this.ref.repository}:${reference}`);
    return digest;
  }

  /** Delete the manifest `digest` (its tags go with it); false when it was already gone. */
  async deleteManifest(digest: string): Promise<boolean> {
    const res = await this.request(this.url(`manifests/${digest}`), { method: 'DELETE' }, 'delete');
    if (res.status === 404) {
      res.body.resume();
      return false;
    }
    if (res.status !== 202 && res.status !== 200) return this.fail(res, `deleting the manifest ${this.ref.repository}@${digest}`);
    res.body.resume();
    return true;
  }

  private async listPaged(first: string, key: 'repositories' | 'tags', scope: string, what: string, missingIsEmpty = false): Promise<string[]> {
    const page = z.looseObject({ [key]: z.array(z.string()).nullish() });
    const all: string[] = [];
    for (let url: string | undefined = first; url !== undefined;) {
      const res = await this.request(url, {}, 'pull', scope);
      if (res.status === 404 && missingIsEmpty) {
        res.body.resume();
        return all;
      }
      if (res.status !== 200) return this.fail(res, what);
      const raw = (await readBody(res)).toString('utf8');
      let parsed: z.infer<typeof page>;
      try {
        parsed = page.parse(JSON.parse(raw));
      } catch (err: unknown) {
        throw new ProtocolError(`${what}: ${this.ref.registry} answered something that is not the expected JSON: ${raw.slice(0, 120)}`, { cause: err });
      }
      all.push(...(parsed[key] ?? []));
      const link = res.headers.link;
      url = nextPage(Array.isArray(link) ? link.join(', ') : link, url);
    }
    return all;
  }
}

/** The next page from an RFC 8288 `Link: <...>; rel="next"` header, resolved against the current URL. */
export function nextPage(link: string | undefined, current: string): string | undefined {
  const m = link === undefined ? null : /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  return m?.[1] === undefined ? undefined : new URL(m[1], current).toString();
}
