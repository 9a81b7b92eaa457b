import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { runImport } from './run.js';
import { contextFor, importFailure } from './test-fixtures.js';
import { makeImage, serveDir, type FileServer } from '../../shared/testing/disk-images.js';

let dir: string;
let out: string;
let server: FileServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'importer-src-'));
  out = mkdtempSync(join(tmpdir(), 'importer-dst-'));
  makeImage(dir, 'disk.raw', 'raw', 16);
  makeImage(dir, 'disk.qcow2', 'qcow2', 24);
  makeImage(dir, 'disk.vmdk', 'vmdk', 8);
  makeImage(dir, 'disk.vdi', 'vdi', 8);
  const qcow = readFileSync(join(dir, 'disk.qcow2'));
  writeFileSync(join(dir, 'truncated.qcow2'), qcow.subarray(0, Math.floor(qcow.length / 2)));
  const gz = gzipSync(readFileSync(join(dir, 'disk.raw')));
  writeFileSync(join(dir, 'disk.raw.gz'), gz);
  writeFileSync(join(dir, 'truncated.raw.gz'), gz.subarray(0, Math.floor(gz.length / 2)));
  writeFileSync(join(dir, 'page.html'), '<!doctype html><html><body>Download here</body></html>\n');
  writeFileSync(join(dir, 'odd.bin'), Buffer.alloc(1000, 1));
  execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', join(dir, 'disk.raw'), '-F', 'raw', join(dir, 'backed.qcow2')]);
  server = await serveDir(dir);
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
});

function importTo(name: string, extra: Record<string, string> = {}, path = `/${name}`): ReturnType<typeof runImport> {
  return runImport(
    contextFor({ IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: `${server.url}${path}`, IMPORTER_DESTINATION_PATH: join(out, `${name}.img`), ...extra }),
  );
}

/** Nothing but finished images in the destination directory: no .importing or .converting leftovers. */
function leftovers(): string[] {
  return readdirSync(out).filter((f) => f.endsWith('.importing') || f.endsWith('.converting'));
}

describe('importing from HTTP into a path', () => {
  it('stores a raw image as raw, byte for byte, and stays sparse', async () => {
    const result = await importTo('disk.raw');
    expect(result).toMatchObject({ phase: 'Succeeded', sourceFormat: 'raw', format: 'raw', virtualSize: 16 << 20, storedSize: 16 << 20, sourceSize: 16 << 20 });
    const written = join(out, 'disk.raw.img');
    expect(readFileSync(written).equals(readFileSync(join(dir, 'disk.raw')))).toBe(true);
    expect(statSync(written).blocks * 512).toBeLessThan(4 << 20);
  });

  it.each(['disk.qcow2', 'disk.vmdk', 'disk.vdi'])('converts %s to raw with its virtual size', async (name) => {
    const result = await importTo(name);
    const mib = name === 'disk.qcow2' ? 24 : 8;
    expect(result).toMatchObject({ phase: 'Succeeded', sourceFormat: name.split('.')[1], format: 'raw', virtualSize: mib << 20 });
    const raw = readFileSync(join(out, `${name}.img`));
    expect(raw.length).toBe(mib << 20);
    expect(raw.subarray(0, 256 << 10).equals(readFileSync(join(dir, `${name}.src.raw`)).subarray(0, 256 << 10))).toBe(true);
  });

  it('keeps qcow2 when asked to and unpacks a gzip source', async () => {
    expect(await importTo('disk.qcow2', { IMPORTER_DESTINATION_FORMAT: 'qcow2' }, '/disk.qcow2')).toMatchObject({ sourceFormat: 'qcow2', format: 'qcow2' });
    expect(await importTo('disk.raw.gz')).toMatchObject({ sourceFormat: 'raw', format: 'raw', virtualSize: 16 << 20 });
  });

  it('verifies md5 and sha256 of the bytes sent and reports them', async () => {
    const body = readFileSync(join(dir, 'disk.qcow2'));
    const md5 = createHash('md5').update(body).digest('hex');
    const sha256 = createHash('sha256').update(body).digest('hex');
    const result = await importTo('disk.qcow2', { IMPORTER_CHECKSUMS: JSON.stringify({ md5, sha256 }) });
    expect(result.checksums).toEqual({ md5, sha256 });
  });

  it.each([
    [
      'a checksum mismatch',
      'disk.raw',
      { IMPORTER_CHECKSUMS: JSON.stringify({ sha256: '0'.repeat(64) }) },
      undefined,
      'ChecksumMismatch',
      /sha256 checksum of the source is [0-9a-f]{64}, expected 0{64}/,
    ],
    ['a 404', 'missing.img', {}, undefined, 'SourceNotFound', /missing\.img was not found \(HTTP 404\)/],
    ['a server error', 'x', {}, '/status/503', 'SourceHTTPError', /answered HTTP 503/],
    ['an HTML page', 'page.html', {}, undefined, 'NotADiskImage', /text/],
    ['a file of no whole sector', 'odd.bin', {}, undefined, 'NotADiskImage', /512-byte sectors/],
    ['a truncated qcow2', 'truncated.qcow2', {}, undefined, 'CorruptImage', /qcow2 image is truncated/],
    ['a truncated gzip', 'truncated.raw.gz', {}, undefined, 'CorruptImage', /gzip-compressed source is damaged/],
    ['a qcow2 with a backing file', 'backed.qcow2', {}, undefined, 'UnsupportedImage', /backing file/],
    ['a download that breaks off', 'disk.qcow2', {}, '/broken/disk.qcow2', 'SourceUnreachable', /broke off|announced/],
    [
      'a source that stops sending',
      'disk.raw',
      { IMPORTER_HTTP_TIMEOUT: '500ms' },
      '/stall/disk.raw',
      'SourceUnreachable',
      /sent nothing for 500 ms|broke off/,
    ],
    ['a source over the size limit', 'disk.raw', { IMPORTER_MAX_SIZE: '1048576' }, undefined, 'SourceTooLarge', /larger than the limit of 1048576 bytes/],
  ])('fails clearly on %s and leaves nothing behind', async (_what, name, extra, path, reason, message) => {
    rmSync(join(out, `${name}.img`), { force: true });
    const err = await importFailure(importTo(name, extra, path));
    expect(err.reason).toBe(reason);
    expect(err.message).toMatch(message);
    expect(leftovers()).toEqual([]);
    expect(readdirSync(out)).not.toContain(`${name}.img`);
  });

  it('fails with SourceUnreachable when nothing listens', async () => {
    const ctx = contextFor({ IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'http://127.0.0.1:1/disk.img', IMPORTER_DESTINATION_PATH: join(out, 'never.img') });
    const err = await importFailure(runImport(ctx));
    expect(err.reason).toBe('SourceUnreachable');
    expect(err.message).toMatch(/ECONNREFUSED/);
  });
});

describe('importing from a local file (a PVC mount)', () => {
  const fromFile = (name: string, extra: Record<string, string> = {}): ReturnType<typeof runImport> =>
    runImport(contextFor({ IMPORTER_SOURCE: 'file', IMPORTER_ENDPOINT: join(dir, name), IMPORTER_DESTINATION_PATH: join(out, `file-${name}.img`), ...extra }));

  it('copies a raw image keeping it sparse and leaves the source in place', async () => {
    const result = await fromFile('disk.raw');
    expect(result).toMatchObject({ phase: 'Succeeded', source: 'file', sourceFormat: 'raw', format: 'raw', virtualSize: 16 << 20 });
    const written = join(out, 'file-disk.raw.img');
    expect(readFileSync(written).equals(readFileSync(join(dir, 'disk.raw')))).toBe(true);
    expect(statSync(written).blocks * 512).toBeLessThan(4 << 20);
    expect(statSync(join(dir, 'disk.raw')).size).toBe(16 << 20);
  });

  it('converts a qcow2 file where it lies, and verifies a checksum by reading it', async () => {
    expect(await fromFile('disk.qcow2')).toMatchObject({ sourceFormat: 'qcow2', format: 'raw', virtualSize: 24 << 20 });
    const sha256 = createHash('sha256')
      .update(readFileSync(join(dir, 'disk.qcow2')))
      .digest('hex');
    expect((await fromFile('disk.qcow2', { IMPORTER_CHECKSUMS: JSON.stringify({ sha256 }) })).checksums).toEqual({ sha256 });
  });

  it.each([
    ['page.html', 'NotADiskImage'],
    ['truncated.qcow2', 'CorruptImage'],
    ['missing.img', 'SourceNotFound'],
  ])('fails on %s with %s and leaves nothing behind', async (name, reason) => {
    expect((await importFailure(fromFile(name))).reason).toBe(reason);
    expect(leftovers()).toEqual([]);
    expect(readdirSync(out)).not.toContain(`file-${name}.img`);
  });
});

describe('importing onto a block device (a Block PVC; a plain file stands in for the device)', () => {
  const device = (name: string, size: number, fill = 0xaa): string => {
    const path = join(out, name);
    writeFileSync(path, Buffer.alloc(size, fill));
    return path;
  };
  const toDevice = (name: string, dev: string): ReturnType<typeof runImport> =>
    runImport(contextFor({ IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: `${server.url}/${name}`, IMPORTER_DESTINATION_DEVICE: dev }));

  it('writes the raw image from the first byte in place: old data overwritten, the device neither truncated nor renamed', async () => {
    const dev = device('dev-a', 32 << 20);
    const result = await toDevice('disk.qcow2', dev);
    expect(result).toMatchObject({ phase: 'Succeeded', sourceFormat: 'qcow2', format: 'raw', virtualSize: 24 << 20, destination: { path: dev } });
    const written = readFileSync(dev);
    expect(written.length).toBe(32 << 20);
    // The image's zero blocks are written too: nothing of the old 0xaa fill is left inside the image.
    const reference = join(out, 'reference.raw');
    execFileSync('qemu-img', ['convert', '-f', 'qcow2', '-O', 'raw', join(dir, 'disk.qcow2'), reference]);
    expect(written.subarray(0, 24 << 20).equals(readFileSync(reference))).toBe(true);
    expect(written[(24 << 20) + 1]).toBe(0xaa);
    expect(readdirSync(out).filter((f) => f.startsWith('dev-a'))).toEqual(['dev-a']);
  });

  it('refuses a device smaller than the image before writing anything', async () => {
    const dev = device('dev-small', 8 << 20);
    const err = await importFailure(toDevice('disk.raw', dev));
    expect(err.reason).toBe('DestinationError');
    expect(err.message).toMatch(/does not fit the device .*dev-small \(8388608 bytes\)/);
    expect(readFileSync(dev).every((b) => b === 0xaa)).toBe(true);
  });

  it('fails with the device named when it does not exist, and never creates it', async () => {
    const missing = join(out, 'no-such-device');
    const err = await importFailure(toDevice('disk.raw', missing));
    expect(err.reason).toBe('DestinationError');
    expect(err.message).toMatch(/cannot open the device .*no-such-device/);
    expect(readdirSync(out)).not.toContain('no-such-device');
  });
});
