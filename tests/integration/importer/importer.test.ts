/**
 * The importer program as its pod runs it (a child process, env only, result in the termination log)
 * against a local HTTP server and a real registry (Debian's docker-registry) as DVCR.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegistryClient, RegistryError } from '../../../shared/oci/client.js';
import { parseImageReference } from '../../../shared/oci/reference.js';
import { startLocalRegistry, type LocalRegistry } from '../../env/local-registry.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { ANNOTATION_FORMAT, ANNOTATION_VIRTUAL_SIZE } from '../../../daemons/importer/dvcr.js';
import { makeImage, serveDir, type FileServer } from '../../../shared/testing/disk-images.js';
import { runImporter, startImporter } from '../../../platform/simulators/storage-simulator/importer-process.js';

let dir: string;
let server: FileServer;
let registry: LocalRegistry;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'importer-it-'));
  makeImage(dir, 'small.raw', 'raw', 10);
  makeImage(dir, 'small.qcow2', 'qcow2', 30);
  const qcow = readFileSync(join(dir, 'small.qcow2'));
  writeFileSync(join(dir, 'corrupt.qcow2'), qcow.subarray(0, qcow.length - 128 * 1024));
  [server, registry] = await Promise.all([serveDir(dir), startLocalRegistry()]);
});

afterAll(async () => {
  await Promise.all([server?.close(), registry?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

async function manifestOf(ref: string): Promise<Awaited<ReturnType<RegistryClient['getManifest']>> | RegistryError> {
  return new RegistryClient(parseImageReference(ref)).getManifest().catch((e: unknown) => e as RegistryError);
}

describe('importer program: HTTP into DVCR', () => {
  it.each([
    ['small.raw', 'raw', 10 << 20],
    ['small.qcow2', 'qcow2', 30 << 20],
  ])('imports %s, records format %s and the virtual size, and the image reads back byte for byte', async (name, format, virtualSize) => {
    const target = `${registry.url}/vi/ns-a/${name.replace('.', '-')}:uid-${format}`;
    const run = await runImporter({
      IMPORTER_SOURCE: 'http',
      IMPORTER_ENDPOINT: `${server.url}/${name}`,
      IMPORTER_DESTINATION_ENDPOINT: target,
      IMPORTER_TEMP_DIR: dir,
    });
    expect(run.code).toBe(0);
    expect(run.result).toMatchObject({ phase: 'Succeeded', source: 'http', sourceFormat: format, format, virtualSize });
    expect(run.logs.some((l) => l['msg'] === 'progress' && l['percent'] === '100.0')).toBe(true);

    const got = await manifestOf(target);
    if (got instanceof Error) throw got;
    expect(got.manifest.annotations).toEqual({ [ANNOTATION_FORMAT]: format, [ANNOTATION_VIRTUAL_SIZE]: String(virtualSize) });
    expect(run.result?.['destination']).toEqual({ registryURL: `${registry.host}/vi/ns-a/${name.replace('.', '-')}:uid-${format}`, digest: got.digest });

    // The pvc-importer's way back: DVCR to a file, raw.
    const out = join(dir, `${name}.pvc`);
    const back = await runImporter({ IMPORTER_SOURCE: 'registry', IMPORTER_ENDPOINT: target, IMPORTER_DESTINATION_PATH: out });
    expect(back.code).toBe(0);
    expect(back.result).toMatchObject({ sourceFormat: format, format: 'raw', virtualSize });
    const original = readFileSync(join(dir, `${name}.src.raw`));
    expect(readFileSync(out).equals(original)).toBe(true);
    rmSync(out);
  });

  it('rejects a corrupted qcow2 with CorruptImage, exit 1, and pushes nothing', async () => {
    const target = `${registry.url}/vi/ns-a/corrupt:uid-1`;
    const run = await runImporter({
      IMPORTER_SOURCE: 'http',
      IMPORTER_ENDPOINT: `${server.url}/corrupt.qcow2`,
      IMPORTER_DESTINATION_ENDPOINT: target,
      IMPORTER_TEMP_DIR: dir,
    });
    expect(run.code).toBe(1);
    expect(run.result).toEqual({ phase: 'Failed', reason: 'CorruptImage', message: 'the qcow2 image is truncated (it refers to data past its end)' });
    const got = await manifestOf(target);
    expect(got).toBeInstanceOf(RegistryError);
    expect((got as RegistryError).upstreamStatus).toBe(404);
  });

  it('rejects a checksum mismatch and an unreachable URL with their reasons', async () => {
    const dest = { IMPORTER_DESTINATION_ENDPOINT: `${registry.url}/vi/ns-a/never:1`, IMPORTER_TEMP_DIR: dir };
    const mismatch = await runImporter({
      IMPORTER_SOURCE: 'http',
      IMPORTER_ENDPOINT: `${server.url}/small.raw`,
      IMPORTER_CHECKSUMS: `{"md5":"${'f'.repeat(32)}"}`,
      ...dest,
    });
    expect([mismatch.code, mismatch.result?.['reason']]).toEqual([1, 'ChecksumMismatch']);
    const unreachable = await runImporter({ IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'http://127.0.0.1:1/x.img', ...dest });
    expect([unreachable.code, unreachable.result?.['reason']]).toEqual([1, 'SourceUnreachable']);
  });

  it('exits 2 on invalid configuration and says what is wrong in the termination log', async () => {
    const run = await runImporter({ IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'http://x/y', IMPORTER_CHECKSUMS: '{"sha256":"short"}' });
    expect(run.code).toBe(2);
    expect(run.result).toMatchObject({ phase: 'Failed', reason: 'InvalidConfiguration' });
    expect(String(run.result?.['message'])).toMatch(/IMPORTER_CHECKSUMS: sha256: sha256 must be 64 hex digits/);
    expect(String(run.result?.['message'])).toMatch(
      /exactly one of IMPORTER_DESTINATION_ENDPOINT, IMPORTER_DESTINATION_PATH and IMPORTER_DESTINATION_DEVICE must be set/,
    );
  });
});

describe('uploader program', () => {
  const uploaderEnv = (): Record<string, string> => ({
    IMPORTER_SOURCE: 'upload',
    UPLOADER_PORT: '0',
    UPLOADER_HOST: '127.0.0.1',
    IMPORTER_DESTINATION_ENDPOINT: `${registry.url}/vi/ns-a/upload:1`,
  });

  it('fails with UploadTimeout when the upload never starts', async () => {
    const run = await runImporter({ ...uploaderEnv(), UPLOADER_WAIT_TIMEOUT: '1s' });
    expect(run.code).toBe(1);
    expect(run.result).toEqual({ phase: 'Failed', reason: 'UploadTimeout', message: 'no upload started within 1 s' });
  });

  it('accepts an upload into DVCR, and ends Interrupted on SIGTERM while waiting', async () => {
    const up = startImporter(uploaderEnv());
    const listening = await waitFor('the uploader to listen', () => up.logs.find((l) => l['msg'] === 'uploader listening'));
    const res = await fetch(`http://127.0.0.1:${String(listening['port'])}/upload`, { method: 'PUT', body: readFileSync(join(dir, 'small.qcow2')) });
    expect(res.status).toBe(200);
    const done = await up.done;
    expect(done.code).toBe(0);
    expect(done.result).toMatchObject({ phase: 'Succeeded', source: 'upload', format: 'qcow2', virtualSize: 30 << 20 });

    const waiting = startImporter(uploaderEnv());
    await waitFor('the uploader to listen', () => waiting.logs.find((l) => l['msg'] === 'uploader listening'));
    waiting.signal('SIGTERM');
    const stopped = await waiting.done;
    expect(stopped.code).toBe(1);
    expect(stopped.result).toMatchObject({ phase: 'Failed', reason: 'Interrupted' });
  });
});
