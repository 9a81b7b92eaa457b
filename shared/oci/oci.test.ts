import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { RegistryError, MEDIA, RegistryClient } from './client.js';
import { readBody } from './http.js';
import { parseImageReference } from './reference.js';
import { startLocalRegistry, type LocalRegistry } from '../../tests/env/local-registry.js';

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
