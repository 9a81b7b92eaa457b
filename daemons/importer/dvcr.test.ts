import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { MEDIA, RegistryClient } from '../../shared/oci/client.js';
import { parseImageReference } from '../../shared/oci/reference.js';
import { startLocalRegistry, type LocalRegistry } from '../../tests/env/local-registry.js';
import { ANNOTATION_FORMAT, ANNOTATION_VIRTUAL_SIZE } from './dvcr.js';
import { runImport } from './run.js';
import { contextFor, importFailure } from './test-fixtures.js';
import { makeImage, serveDir, type FileServer } from '../../shared/testing/disk-images.js';

let dir: string;
let scratch: string;
let server: FileServer;
let registry: LocalRegistry;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'importer-dvcr-'));
  scratch = mkdtempSync(join(tmpdir(), 'importer-scratch-'));
  makeImage(dir, 'disk.qcow2', 'qcow2', 20);
  makeImage(dir, 'disk.vmdk', 'vmdk', 4);
  [server, registry] = await Promise.all([serveDir(dir), startLocalRegistry()]);
});

afterAll(async () => {
  await Promise.all([server.close(), registry.stop()]);
  rmSync(dir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Push a one-layer image: `docker` gives the shape `docker build` makes (gzip layer), else OCI with a plain tar layer. */
async function pushOneLayer(repo: string, layer: Buffer, shape: 'docker' | 'oci'): Promise<void> {
  const client = new RegistryClient(parseImageReference(`${registry.url}/${repo}:v1`));
  await client.pushBlob(layer, sha256(layer));
  const config = Buffer.from('{"architecture":"amd64","os":"linux"}');
  await client.pushBlob(config, sha256(config));
  const docker = shape === 'docker';
  const mediaType = docker ? MEDIA.dockerManifest : MEDIA.ociManifest;
  await client.putManifest(
    {
      schemaVersion: 2,
      mediaType,
      config: { mediaType: docker ? 'application/vnd.docker.container.image.v1+json' : MEDIA.ociConfig, digest: sha256(config), size: config.length },
      layers: [{ mediaType: docker ? MEDIA.dockerLayerGzip : MEDIA.ociLayerTar, digest: sha256(layer), size: layer.length }],
    },
    mediaType,
  );
}

/** A tar archive of these files, packed by tar-stream. */
async function tarOf(files: Array<[string, Buffer]>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of files) pack.entry({ name }, content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('the tar framing of layers (tar-stream)', () => {
  it('writes a disk of 8 GiB and more with a base-256 size and reads the size back', async () => {
    const size = 10 * 2 ** 30;
    const pack = tar.pack();
    pack.entry({ name: 'disk/disk.img', size });
    const header = (await (pack as AsyncIterable<Buffer>)[Symbol.asyncIterator]().next()).value as Buffer;
    expect(header.length).toBe(512);
    expect(header[124]).toBe(0x80);
    const extract = tar.extract();
    extract.write(header);
    for await (const entry of extract) {
      expect(entry.header.size).toBe(size);
      break;
    }
  });
});

/** A containerDisk: one gzip layer with an unrelated file and disk/<name>. */
async function pushContainerDisk(repo: string, name: string, content: Buffer): Promise<void> {
  const layer = await tarOf([
    ['etc/hostname', Buffer.from('x\n')],
    [`disk/${name}`, content],
  ]);
  await pushOneLayer(repo, gzipSync(layer), 'docker');
}

describe('DVCR as the destination', () => {
  it('pushes a qcow2 from HTTP as an OCI image with disk/disk.img, format and virtual size, then a registry import reads it back to raw', async () => {
    const target = `${registry.url}/vi/ns/disk:uid-1`;
    const pushed = await runImport(
      contextFor({ IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: `${server.url}/disk.qcow2`, IMPORTER_DESTINATION_ENDPOINT: target, IMPORTER_TEMP_DIR: scratch }),
    );
    expect(pushed).toMatchObject({
      phase: 'Succeeded',
      sourceFormat: 'qcow2',
      format: 'qcow2',
      virtualSize: 20 << 20,
      destination: { registryURL: `${registry.host}/vi/ns/disk:uid-1` },
    });
    const { manifest, digest } = await new RegistryClient(parseImageReference(target)).getManifest();
    expect('digest' in pushed.destination && pushed.destination.digest).toBe(digest);
    expect(manifest.annotations).toEqual({ [ANNOTATION_FORMAT]: 'qcow2', [ANNOTATION_VIRTUAL_SIZE]: String(20 << 20) });
    expect(manifest.layers).toHaveLength(1);
    expect(readdirSync(scratch)).toEqual([]);

    const out = join(scratch, 'pvc.img');
    const pulled = await runImport(contextFor({ IMPORTER_SOURCE: 'registry', IMPORTER_ENDPOINT: target, IMPORTER_DESTINATION_PATH: out }));
    expect(pulled).toMatchObject({ sourceFormat: 'qcow2', format: 'raw', virtualSize: 20 << 20 });
    const raw = readFileSync(out);
    expect(raw.length).toBe(20 << 20);
    expect(raw.subarray(0, 256 << 10).equals(readFileSync(join(dir, 'disk.qcow2.src.raw')).subarray(0, 256 << 10))).toBe(true);
    rmSync(out);
  });

  it('stores a vmdk as qcow2', async () => {
    const result = await runImport(
      contextFor({
        IMPORTER_SOURCE: 'http',
        IMPORTER_ENDPOINT: `${server.url}/disk.vmdk`,
        IMPORTER_DESTINATION_ENDPOINT: `${registry.url}/cvi/vm:u2`,
        IMPORTER_TEMP_DIR: scratch,
      }),
    );
    expect(result).toMatchObject({ sourceFormat: 'vmdk', format: 'qcow2', virtualSize: 4 << 20 });
  });

  it('fails with DestinationError when DVCR does not answer, and cleans the scratch space', async () => {
    const err = await importFailure(
      runImport(
        contextFor({
          IMPORTER_SOURCE: 'http',
          IMPORTER_ENDPOINT: `${server.url}/disk.vmdk`,
          IMPORTER_DESTINATION_ENDPOINT: 'http://127.0.0.1:1/vi/ns/x:1',
          IMPORTER_TEMP_DIR: scratch,
        }),
      ),
    );
    expect(err.reason).toBe('DestinationError');
    expect(err.message).toMatch(/cannot push to DVCR http:\/\/127\.0\.0\.1:1\/vi\/ns\/x:1: cannot reach/);
    expect(readdirSync(scratch)).toEqual([]);
  });
});

describe('a container image as the source', () => {
  it('takes the file under disk/ of a gzip-layered containerDisk', async () => {
    await pushContainerDisk('images/cd', 'fedora.qcow2', readFileSync(join(dir, 'disk.qcow2')));
    const result = await runImport(
      contextFor({
        IMPORTER_SOURCE: 'registry',
        IMPORTER_ENDPOINT: `${registry.url}/images/cd:v1`,
        IMPORTER_DESTINATION_ENDPOINT: `${registry.url}/vi/ns/cd:u3`,
        IMPORTER_TEMP_DIR: scratch,
      }),
    );
    expect(result).toMatchObject({ sourceFormat: 'qcow2', format: 'qcow2', virtualSize: 20 << 20 });
  });

  it('fails with NotADiskImage for an image without disk/, SourceNotFound for a missing tag', async () => {
    await pushOneLayer('images/app', await tarOf([['bin/app', Buffer.from('abc')]]), 'oci');
    const dest = { IMPORTER_DESTINATION_PATH: join(scratch, 'never.img') };
    const noDisk = await importFailure(runImport(contextFor({ IMPORTER_SOURCE: 'registry', IMPORTER_ENDPOINT: `${registry.url}/images/app:v1`, ...dest })));
    expect(noDisk.reason).toBe('NotADiskImage');
    expect(noDisk.message).toMatch(/no file under disk\//);
    const missing = await importFailure(runImport(contextFor({ IMPORTER_SOURCE: 'registry', IMPORTER_ENDPOINT: `${registry.url}/images/none:v1`, ...dest })));
    expect(missing.reason).toBe('SourceNotFound');
    expect(readdirSync(scratch)).toEqual([]);
  });
});

describe('a DVCR that wants credentials (htpasswd)', () => {
  let secured: LocalRegistry;
  beforeAll(async () => {
    secured = await startLocalRegistry({ user: { name: 'importer', password: 's3cret' } });
  });
  afterAll(async () => {
    await secured.stop();
  });

  it('pushes with the .dockerconfigjson credentials and names the problem without them', async () => {
    const auth = join(scratch, '..', `dvcr-auth-${process.pid}.json`);
    writeFileSync(auth, JSON.stringify({ auths: { [secured.host]: { auth: Buffer.from('importer:s3cret').toString('base64') } } }));
    const common = {
      IMPORTER_SOURCE: 'http',
      IMPORTER_ENDPOINT: `${server.url}/disk.vmdk`,
      IMPORTER_DESTINATION_ENDPOINT: `${secured.url}/vi/ns/auth:1`,
      IMPORTER_TEMP_DIR: scratch,
    };
    try {
      expect(await runImport(contextFor({ ...common, IMPORTER_DESTINATION_AUTH_CONFIG: auth }))).toMatchObject({ phase: 'Succeeded', format: 'qcow2' });
      const err = await importFailure(runImport(contextFor(common)));
      expect(err.reason).toBe('DestinationError');
      expect(err.message).toMatch(/asks for credentials and none were given/);
    } finally {
      rmSync(auth, { force: true });
    }
  });
});

describe('a registry source that breaks the protocol', () => {
  it('fails with NotADiskImage for a layer that is no tar archive, SourceHTTPError for a manifest that is no JSON', async () => {
    await pushOneLayer('images/junk', Buffer.alloc(4096, 0x41), 'oci');
    const dest = { IMPORTER_DESTINATION_PATH: join(scratch, 'never.img') };
    const junk = await importFailure(runImport(contextFor({ IMPORTER_SOURCE: 'registry', IMPORTER_ENDPOINT: `${registry.url}/images/junk:v1`, ...dest })));
    expect(junk.reason).toBe('NotADiskImage');
    expect(junk.message).toMatch(/images\/junk:v1: layer sha256:[0-9a-f]{64} is not a readable tar archive \(Invalid tar header/);

    const whole = await tarOf([['disk/disk.img', Buffer.alloc(10_000, 7)]]);
    await pushOneLayer('images/cut', whole.subarray(0, 512 + 4096), 'oci');
    const cut = await importFailure(runImport(contextFor({ IMPORTER_SOURCE: 'registry', IMPORTER_ENDPOINT: `${registry.url}/images/cut:v1`, ...dest })));
    expect(cut.reason).toBe('NotADiskImage');
    expect(cut.message).toMatch(/images\/cut:v1: layer sha256:[0-9a-f]{64} is not a readable tar archive \(Unexpected end of data\)/);

    const liar = createServer((_req, res) => res.writeHead(200, { 'content-type': MEDIA.ociManifest }).end('<html>not json</html>'));
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    try {
      const port = (liar.address() as { port: number }).port;
      const err = await importFailure(
        runImport(contextFor({ IMPORTER_SOURCE: 'registry', IMPORTER_ENDPOINT: `http://127.0.0.1:${port}/images/x:v1`, ...dest })),
      );
      expect(err.reason).toBe('SourceHTTPError');
      expect(err.message).toMatch(/manifest of images\/x:v1 is not JSON/);
    } finally {
      liar.close();
    }
    expect(readdirSync(scratch)).toEqual([]);
  });
});
