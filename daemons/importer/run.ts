/**
 * One import, source to destination: receive into a scratch file (hashing, counting, gunzip, holes
 * kept), detect the format by magic, let qemu-img read its virtual size and check it, convert when the
 * destination wants another format, then rename into place (a path) or push (DVCR). Nothing is left
 * under the destination's name unless the whole import succeeded, and scratch data is always removed.
 */
import { execFile } from 'node:child_process';
import { closeSync, openSync, readSync, renameSync, rmSync, statSync, type Stats } from 'node:fs';
import { mkdtemp, open, rm, stat, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../../shared/errors/index.js';
import type { Logger } from '../../shared/log/index.js';
import { credentialsFromDockerConfig } from '../../shared/oci/auth.js';
import { RegistryClient } from '../../shared/oci/client.js';
import { parseImageReference } from '../../shared/oci/reference.js';
import type { ImporterConfig, SourceKind } from './config.js';
import { pushDisk } from './dvcr.js';
import { ImportError } from './errors.js';
import { DETECT_BYTES, detectFormat, type DiskFormat } from './format.js';
import type { Progress } from './progress.js';
import { checkImage, convertImage, imageInfo } from './qemu.js';
import { receiveToFile } from './sink.js';
import { openFile, openHttp, openRegistry, readCaDir, sourceFailure, type OpenedSource } from './sources.js';

export interface ImportSuccess {
  readonly phase: 'Succeeded';
  readonly source: SourceKind;
  /** The format the source had (after gunzip). */
  readonly sourceFormat: DiskFormat;
  /** The format stored at the destination. */
  readonly format: DiskFormat;
  readonly virtualSize: number;
  /** Bytes stored: the file's size, or the DVCR layer's. */
  readonly storedSize: number;
  /** Bytes the source sent. */
  readonly sourceSize: number;
  readonly checksums: { md5?: string; sha256?: string };
  readonly destination: { readonly registryURL: string; readonly digest: string } | { readonly path: string };
  readonly durationMs: number;
}

export interface ImportContext {
  readonly config: ImporterConfig;
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly progress: Progress;
}

/** Open the configured source (http, registry or file) and import it. Upload goes through the uploader. */
export async function runImport(ctx: ImportContext): Promise<ImportSuccess> {
  const { config, signal } = ctx;
  const endpoint = config.IMPORTER_ENDPOINT ?? '';
  let opened: OpenedSource;
  if (config.IMPORTER_SOURCE === 'http') opened = await openHttp(endpoint, config, signal);
  else if (config.IMPORTER_SOURCE === 'registry') opened = await openRegistry(endpoint, config, signal, (bytes) => ctx.progress.setTotal(bytes));
  else if (config.IMPORTER_SOURCE === 'file') return importLocalFile(endpoint, ctx);
  else throw new ImportError('InvalidConfiguration', 'an upload is received by the uploader, not opened');
  return importStream(opened, ctx);
}

/** The format to store: a path gets raw unless told otherwise; DVCR keeps raw, qcow2 and iso as they are. */
function targetFormat(config: ImporterConfig, detected: DiskFormat): DiskFormat {
  const local = config.IMPORTER_DESTINATION_PATH !== undefined || config.IMPORTER_DESTINATION_DEVICE !== undefined;
  const wanted = config.IMPORTER_DESTINATION_FORMAT ?? (local ? 'raw' : 'source');
  if (wanted !== 'source') return detected === 'iso' && wanted === 'raw' ? 'iso' : wanted;
  return detected === 'vmdk' || detected === 'vdi' ? 'qcow2' : detected;
}

interface Scratch {
  /** Where a stream is received. */
  readonly received: string;
  /** Where a conversion writes. */
  readonly converted: string;
  /** Where a copy of a local file goes before its rename into place. */
  readonly copied: string;
  cleanup(): Promise<void>;
}

/** Scratch files: next to a path destination (the PVC, so a finished raw image is only renamed), else a temp dir. */
async function scratchFor(config: ImporterConfig): Promise<Scratch> {
  const destPath = config.IMPORTER_DESTINATION_PATH;
  if (destPath !== undefined) {
    const files = [`${destPath}.importing`, `${destPath}.converting`];
    return {
      received: files[0] ?? '',
      converted: files[1] ?? '',
      copied: files[0] ?? '',
      // Synchronous: two unlinks of files usually gone already (see importLocalFile).
      cleanup: () => Promise.resolve(files.forEach((f) => rmSync(f, { force: true }))),
    };
  }
  const dir = await mkdtemp(join(config.IMPORTER_TEMP_DIR ?? tmpdir(), 'importer-'));
  return {
    received: join(dir, 'source'),
    converted: join(dir, 'converted'),
    copied: join(dir, 'copied'),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A complete image in a local file, verified by nothing yet. */
interface LocalImage {
  readonly path: string;
  /** The file is ours (scratch) and may be renamed or removed; else it is the source and stays. */
  readonly owned: boolean;
  readonly head: Buffer;
  readonly size: number;
  readonly sourceSize: number;
  readonly checksums: { md5?: string; sha256?: string };
  readonly compression?: 'gzip' | undefined;
}

export async function importStream(opened: OpenedSource, ctx: ImportContext): Promise<ImportSuccess> {
  const { config, signal, progress } = ctx;
  const started = Date.now();
  const scratch = await scratchFor(config);
  try {
    progress.start(opened.total);
    const got = await receiveToFile(opened.body, scratch.received, {
      expected: config.IMPORTER_CHECKSUMS,
      maxSize: config.IMPORTER_MAX_SIZE,
      progress,
      signal,
    }).catch((err: unknown) => sourceFailure(err, 'cannot receive the source'));
    progress.finish();
    if (opened.total !== undefined && got.sourceSize !== opened.total) {
      throw new ImportError('SourceUnreachable', `the source announced ${opened.total} bytes but sent ${got.sourceSize}`);
    }
    return await store({ path: scratch.received, owned: true, ...got }, scratch, ctx, started);
  } finally {
    progress.finish();
    await scratch.cleanup();
  }
}

/**
 * A local regular file (a PVC mount) is not streamed: it is checked and converted where it lies, and a
 * raw image is copied with `cp --sparse=always`, which skips its holes (SEEK_DATA) as no stream can.
 * Checksums, gzip, block devices and size limits take the streaming way. Its metadata calls (stat, the
 * head, rename, cleanup) are synchronous: each takes microseconds, an asynchronous one waits for a
 * thread-pool and an event-loop turn (measured on a busy 2-core node: ~1 ms of the ~13 ms that the
 * copy of a 1 GiB sparse image takes; tests/bench/importer.bench.ts).
 */
async function importLocalFile(path: string, ctx: ImportContext): Promise<ImportSuccess> {
  const { config } = ctx;
  const started = Date.now();
  const info = statOrUndefined(path);
  const wantsStream =
    info === undefined ||
    !info.isFile() ||
    config.IMPORTER_CHECKSUMS.md5 !== undefined ||
    config.IMPORTER_CHECKSUMS.sha256 !== undefined ||
    config.IMPORTER_MAX_SIZE > 0;
  const head = wantsStream ? undefined : readHead(path);
  if (info === undefined || head === undefined || (head[0] === 0x1f && head[1] === 0x8b)) return importStream(await openFile(path), ctx);
  const scratch = await scratchFor(config);
  try {
    ctx.progress.start(info.size);
    const result = await store({ path, owned: false, head, size: info.size, sourceSize: info.size, checksums: {} }, scratch, ctx, started);
    ctx.progress.add(info.size);
    return result;
  } finally {
    ctx.progress.finish();
    await scratch.cleanup();
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function readHead(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(DETECT_BYTES);
    return head.subarray(0, readSync(fd, head, 0, DETECT_BYTES, 0));
  } finally {
    closeSync(fd);
  }
}

/** Detect, verify, convert if needed, and put the image at the destination. */
async function store(image: LocalImage, scratch: Scratch, ctx: ImportContext, started: number): Promise<ImportSuccess> {
  const { config, signal, log } = ctx;
  const detection = detectFormat(image.head, image.size);
  if (detection.kind === 'not-an-image') throw new ImportError('NotADiskImage', `not a disk image: ${detection.why}`);
  if (detection.kind === 'compressed') {
    throw new ImportError(
      'UnsupportedImage',
      `the ${image.compression === 'gzip' ? 'unpacked source is again' : 'source is'} ${detection.compression}-compressed; only gzip is unpacked`,
    );
  }
  const sourceFormat = detection.format;
  // A raw or iso image is its own virtual size; the others are read by qemu-img.
  const info =
    sourceFormat === 'raw' || sourceFormat === 'iso' ? { virtualSize: image.size, backingFile: undefined } : await imageInfo(image.path, sourceFormat, signal);
  if (info.backingFile !== undefined) {
    throw new ImportError('UnsupportedImage', `the ${sourceFormat} image has a backing file (${info.backingFile}); import a standalone image`);
  }
  await checkImage(image.path, sourceFormat, signal);
  const format = targetFormat(config, sourceFormat);
  let final = image.path;
  let owned = image.owned;
  if (format !== sourceFormat) {
    if (format === 'iso' || format === 'vmdk' || format === 'vdi') throw new ImportError('InternalError', `cannot store as ${format}`);
    log.info({ from: sourceFormat, to: format }, 'converting');
    await convertImage(image.path, sourceFormat, scratch.converted, format, signal);
    if (image.owned) await rm(image.path, { force: true });
    final = scratch.converted;
    owned = true;
  }
  // A received or local image's size is known; only a converted one is asked for.
  const finalSize = final === image.path ? image.size : (await stat(final)).size;
  log.info({ sourceFormat, format, virtualSize: info.virtualSize, size: finalSize }, 'image verified');
  const destPath = config.IMPORTER_DESTINATION_PATH;
  const device = config.IMPORTER_DESTINATION_DEVICE;
  let destination: ImportSuccess['destination'];
  let storedSize = finalSize;
  if (device !== undefined) {
    await writeToDevice(final, finalSize, device, signal);
    destination = { path: device };
  } else if (destPath !== undefined) {
    try {
      if (!owned) {
        await copySparse(final, scratch.copied, signal);
        final = scratch.copied;
      }
      renameSync(final, destPath);
    } catch (err: unknown) {
      if (err instanceof ImportError) throw err;
      throw new ImportError('DestinationError', `cannot write ${destPath}: ${errorMessage(err)}`, { cause: err });
    }
    destination = { path: destPath };
  } else {
    const pushed = await pushToDvcr(config, signal, { path: final, size: finalSize, format, virtualSize: info.virtualSize }, ctx);
    destination = { registryURL: pushed.registryURL, digest: pushed.digest };
    storedSize = pushed.layerSize;
  }
  return {
    phase: 'Succeeded',
    source: config.IMPORTER_SOURCE,
    sourceFormat,
    format,
    virtualSize: info.virtualSize,
    storedSize,
    sourceSize: image.sourceSize,
    checksums: image.checksums,
    destination,
    durationMs: Date.now() - started,
  };
}

/**
 * Copy the finished image onto a block device from its first byte, as `qemu-img convert` onto a
 * device does: opened for writing in place (never created or truncated; a missing device is an
 * error), every block written (the device may hold old data), synced. A device smaller than the image
 * is refused before anything is written (a regular file standing in for a device has its size; a
 * real block device reports 0 and a short device fails the write with ENOSPC).
 */
async function writeToDevice(from: string, size: number, device: string, signal: AbortSignal): Promise<void> {
  let out: FileHandle;
  try {
    out = await open(device, 'r+');
  } catch (err: unknown) {
    throw new ImportError('DestinationError', `cannot open the device ${device}: ${errorMessage(err)}`, { cause: err });
  }
  try {
    const capacity = (await out.stat()).size;
    if (capacity > 0 && capacity < size) {
      throw new ImportError('DestinationError', `the image (${size} bytes) does not fit the device ${device} (${capacity} bytes)`);
    }
    const input = await open(from, 'r');
    try {
      const block = Buffer.alloc(1 << 20);
      for (let pos = 0; pos < size;) {
        signal.throwIfAborted();
        const { bytesRead } = await input.read(block, 0, block.length, pos);
        if (bytesRead === 0) break;
        await out.write(block, 0, bytesRead, pos);
        pos += bytesRead;
      }
    } finally {
      await input.close();
    }
    await out.sync();
  } catch (err: unknown) {
    if (err instanceof ImportError) throw err;
    if (signal.aborted) throw new ImportError('Interrupted', 'the import was interrupted', { cause: err });
    throw new ImportError('DestinationError', `cannot write the device ${device}: ${errorMessage(err)}`, { cause: err });
  } finally {
    await out.close();
  }
}

/** `cp --sparse=always`: holes of the source and all-zero blocks become holes of the copy. */
function copySparse(from: string, to: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('cp', ['--sparse=always', '--', from, to], { signal }, (err, _stdout, stderr) => {
      if (err === null) resolve();
      else
        reject(
          new ImportError(
            signal.aborted ? 'Interrupted' : 'DestinationError',
            signal.aborted ? 'the import was interrupted' : `copying the image failed: ${stderr.trim() || err.message}`,
            { cause: err },
          ),
        );
    });
  });
}

async function pushToDvcr(
  config: ImporterConfig,
  signal: AbortSignal,
  file: { path: string; size: number; format: DiskFormat; virtualSize: number },
  ctx: ImportContext,
): Promise<{ registryURL: string; digest: string; layerSize: number }> {
  const endpoint = config.IMPORTER_DESTINATION_ENDPOINT ?? '';
  let ref;
  try {
    ref = parseImageReference(endpoint);
  } catch (err: unknown) {
    throw new ImportError('InvalidConfiguration', `IMPORTER_DESTINATION_ENDPOINT: ${errorMessage(err)}`, { cause: err });
  }
  const credentials =
    config.IMPORTER_DESTINATION_AUTH_CONFIG !== undefined ? credentialsFromDockerConfig(config.IMPORTER_DESTINATION_AUTH_CONFIG, ref.registry) : undefined;
  const client = new RegistryClient(ref, {
    credentials,
    tls: { ca: readCaDir(config.IMPORTER_CERT_DIR), insecure: config.DESTINATION_INSECURE_TLS },
    timeoutMs: config.IMPORTER_HTTP_TIMEOUT,
    signal,
  });
  ctx.log.info({ destination: endpoint, bytes: file.size }, 'pushing to DVCR');
  try {
    return await pushDisk(client, ref, file);
  } catch (err: unknown) {
    if (signal.aborted) throw new ImportError('Interrupted', 'the import was interrupted', { cause: err });
    throw new ImportError('DestinationError', `cannot push to DVCR ${endpoint}: ${errorMessage(err)}`, { cause: err });
  }
}
