import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { RegistryError, MEDIA, RegistryClient } from './client.js';
import { readBody } from './http.js';
import { parseImageReference } from './reference.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProtocolError, UnavailableError } from '../errors/index.js';
import { nextPage } from './client.js';
import { pushTestImage, startLocalRegistry, type LocalRegistry } from '../../tests/env/local-registry.js';

describe('parseImageReference', () => {
  it.each([
    ['debian:12', { scheme: 'https', registry: 'registry-1.docker.io', repository: 'library/debian', reference: '12' }],
    ['registry.example.com/vi/ns/name:uid-1', { scheme: 'https', registry: 'registry.example.com', repository: 'vi/ns/name', reference: 'uid-1' }],
    ['http://127.0.0.1:5000/cvi/img', { scheme: 'http', registry: '127.0.0.1:5000', repository: 'cvi/img', reference: 'latest' }],
    [`localhost/a@sha256:${'a'.repeat(64)}`, { scheme: 'https', registry: 'localhost', repository: 'a', reference: `sha256:${'a'.repeat(64)}` }],
  ])('reads %s', (text, want) => {
    expect(parseImageReference(text)).toEqual(want);
  });

  it.each([
    ['ftp://host/repo', /only http/],
    ['host.example/Upper:tag', /lowercase/],
    ['host.example/repo@sha256:short', /digest/],
    ['host.example/repo:bad tag', /tag/],
  ])('refuses %s with the reason', (text, message) => {
    expect(() => parseImageReference(text)).toThrow(message);
  });
});

describe('RegistryClient against a real docker-registry', () => {
  let registry: LocalRegistry;
  beforeAll(async () => {
    registry = await startLocalRegistry();
  });
  afterAll(async () => {
    await registry.stop();
  });

  it('pushes a streamed blob and a manifest, and reads both back', async () => {
    const ref = parseImageReference(`${registry.url}/vi/ns/disk:uid-1`);
    const client = new RegistryClient(ref);
    const data = Buffer.alloc(3 << 20, 7);
    const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
    await client.pushBlobStream(Readable.from([data.subarray(0, 1 << 20), data.subarray(1 << 20)]), () => digest);
    const config = Buffer.from('{}');
    const configDigest = `sha256:${createHash('sha256').update(config).digest('hex')}`;
    await client.pushBlob(config, configDigest);
    const manifestDigest = await client.putManifest(
      {
        schemaVersion: 2,
        mediaType: MEDIA.ociManifest,
        config: { mediaType: MEDIA.ociConfig, digest: configDigest, size: 2 },
        layers: [{ mediaType: MEDIA.ociLayerTar, digest, size: data.length }],
      },
      MEDIA.ociManifest,
    );
    const got = await client.getManifest();
    expect(got.digest).toBe(manifestDigest);
    expect(got.manifest.layers?.[0]?.digest).toBe(digest);
    const blob = await readBody(await client.getBlob(digest), 8 << 20);
    expect(blob.equals(data)).toBe(true);
  });

  it('refuses a blob whose digest is wrong, naming the registry answer', async () => {
    const client = new RegistryClient(parseImageReference(`${registry.url}/vi/ns/wrong:1`));
    const err = await client
      .pushBlobStream(Readable.from([Buffer.from('abc')]), () => `sha256:${'0'.repeat(64)}`)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(RegistryError);
    expect((err as RegistryError).upstreamStatus).toBe(400);
  });

  it('says a missing manifest is 404', async () => {
    const client = new RegistryClient(parseImageReference(`${registry.url}/vi/ns/none:1`));
    const err = await client.getManifest().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as RegistryError).upstreamStatus).toBe(404);
  });
});

describe('listing and deleting in a real docker-registry', () => {
  let registry: LocalRegistry;
  beforeAll(async () => {
    registry = await startLocalRegistry();
    await pushTestImage(registry.url, 'cvi/one', 'uid-1', 'one');
    await pushTestImage(registry.url, 'vi/ns/two', 'uid-2', 'two');
    await pushTestImage(registry.url, 'vi/ns/two', 'uid-3', 'three');
  });
  afterAll(async () => {
    await registry.stop();
  });
  const client = (repo: string): RegistryClient => new RegistryClient(parseImageReference(`${registry.url}/${repo}`));

  it('lists every repository page by page, and the tags of one', async () => {
    expect((await client('cvi/one').listRepositories(1)).sort()).toEqual(['cvi/one', 'vi/ns/two']);
    expect((await client('vi/ns/two').listTags(1)).sort()).toEqual(['uid-2', 'uid-3']);
    expect(await client('vi/ns/none').listTags()).toEqual([]);
  });

  it('deletes a manifest by the digest its tag resolves to; the tag is gone, the other stays', async () => {
    const c = client('vi/ns/two:uid-2');
    const digest = await c.resolveDigest();
    expect(digest).toMatch(/^sha256:/);
    expect(await c.deleteManifest(digest ?? '')).toBe(true);
    expect(await c.deleteManifest(digest ?? '')).toBe(false);
    expect(await c.resolveDigest()).toBeUndefined();
    expect(await client('vi/ns/two').listTags()).toEqual(['uid-3']);
  });
});

describe('a registry that answers badly', () => {
  let server: Server;
  let url: string;
  let answer: (path: string) => { status: number; body: string };
  beforeAll(async () => {
    server = createServer((req, res) => {
      const a = answer(req.url ?? '');
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  const failure = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );

  it('garbage in the catalog is a ProtocolError naming the registry and what it said', async () => {
    answer = () => ({ status: 200, body: '<html>hello</html>' });
    const err = await failure(new RegistryClient(parseImageReference(`${url}/x`)).listRepositories());
    expect(err).toBeInstanceOf(ProtocolError);
    expect(String(err)).toMatch(/listing the catalog: 127\.0\.0\.1:\d+ answered something that is not the expected JSON: <html>hello/);
  });

  it('a catalog of the wrong shape is a ProtocolError too', async () => {
    answer = () => ({ status: 200, body: '{"repositories": [1, 2]}' });
    expect(await failure(new RegistryClient(parseImageReference(`${url}/x`)).listRepositories())).toBeInstanceOf(ProtocolError);
  });

  it('a 500 is a RegistryError with the status and the body', async () => {
    answer = () => ({ status: 500, body: 'disk on fire' });
    const err = await failure(new RegistryClient(parseImageReference(`${url}/x`)).listRepositories());
    expect(err).toBeInstanceOf(RegistryError);
    expect((err as RegistryError).upstreamStatus).toBe(500);
    expect(String(err)).toContain('disk on fire');
  });

  it('a HEAD without a digest header is a ProtocolError', async () => {
    answer = () => ({ status: 200, body: '' });
    expect(await failure(new RegistryClient(parseImageReference(`${url}/x:t`)).resolveDigest())).toBeInstanceOf(ProtocolError);
  });

  it('an unreachable registry is an UnavailableError naming the host', async () => {
    const err = await failure(new RegistryClient(parseImageReference('http://127.0.0.1:1/x')).listRepositories());
    expect(err).toBeInstanceOf(UnavailableError);
    expect(String(err)).toContain('cannot reach 127.0.0.1:1');
  });
});

describe('nextPage', () => {
  it.each([
    ['</v2/_catalog?last=b&n=1>; rel="next"', 'http://r:5000/v2/_catalog?n=1', 'http://r:5000/v2/_catalog?last=b&n=1'],
    [undefined, 'http://r/v2/_catalog', undefined],
    ['<http://r/other>; rel="prev"', 'http://r/v2/_catalog', undefined],
  ])('%s from %s is %s', (link, current, want) => {
    expect(nextPage(link, current)).toBe(want);
  });
});
