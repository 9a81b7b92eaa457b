/**
 * One import, source to destination: receive into a scratch file (hashing, counting, gunzip, holes
 * kept), detect the format by magic, let qemu-img read its virtual size and check it, convert when the
 * destination wants another format, then rename into place (a path) or push (DVCR). Nothing is left
 * under the destination's name unless the whole import succeeded, and scratch data is always removed.
 */
import { mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../shared/log/index.js';
import { credentialsFromDockerConfig } from '../../shared/oci/auth.js';
import { RegistryClient } from '../../shared/oci/client.js';
import { parseImageReference } from '../../shared/oci/reference.js';
import type { ImporterConfig, SourceKind } from './config.js';
import { pushDisk } from './dvcr.js';
import { ImportError } from './errors.js';
import { detectFormat, type DiskFormat } from './format.js';
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
  else if (config.IMPORTER_SOURCE === 'registry') opened = await openRegistry(endpoint, config, signal);
  else if (config.IMPORTER_SOURCE === 'file') opened = await openFile(endpoint);
  else throw new ImportError('InvalidConfiguration', 'an upload is received by the uploader, not opened');
  return importStream(opened, ctx);
}

/** The format to store: a path gets raw unless told otherwise; DVCR keeps raw, qcow2 and iso as they are. */
function targetFormat(config: ImporterConfig, detected: DiskFormat): DiskFormat {
  const wanted = config.IMPORTER_DESTINATION_FORMAT ?? (config.IMPORTER_DESTINATION_PATH !== undefined ? 'raw' : 'source');
  if (wanted !== 'source') return detected === 'iso' && wanted === 'raw' ? 'iso' : wanted;
  return detected === 'vmdk' || detected === 'vdi' ? 'qcow2' : detected;
}

export async function importStream(opened: OpenedSource, ctx: ImportContext): Promise<ImportSuccess> {
  const { config, signal, log, progress } = ctx;
  const started = Date.now();
  const destPath = config.IMPORTER_DESTINATION_PATH;
  // A path destination receives next to itself (the PVC), so a raw image needs no second copy.
  const scratchDir = destPath === undefined ? await mkdtemp(join(config.IMPORTER_TEMP_DIR ?? tmpdir(), 'importer-')) : undefined;
  const received = scratchDir !== undefined ? join(scratchDir, 'source') : `${destPath}.importing`;
  const converted = scratchDir !== undefined ? join(scratchDir, 'converted') : `${destPath}.converting`;
  try {
    progress.start(opened.total);
    const got = await receiveToFile(opened.body, received, { expected: config.IMPORTER_CHECKSUMS, maxSize: config.IMPORTER_MAX_SIZE, progress, signal }).catch((err: unknown) =>
      sourceFailure(err, 'cannot receive the source'),
    );
    progress.finish();
    if (opened.total !== undefined && got.sourceSize !== opened.total) {
      throw new ImportError('SourceUnreachable', `the source announced ${opened.total} bytes but sent ${got.sourceSize}`);
    }
    const detection = detectFormat(got.head, got.size);
    if (detection.kind === 'not-an-image') throw new ImportError('NotADiskImage', `not a disk image: ${detection.why}`);
    if (detection.kind === 'compressed') {
      throw new ImportError('UnsupportedImage', `the ${got.compression === 'gzip' ? 'unpacked source is again' : 'source is'} ${detection.compression}-compressed; only gzip is unpacked`);
    }
    const sourceFormat = detection.format;
    const info = await imageInfo(received, sourceFormat, signal);
    if (info.backingFile !== undefined) {
      throw new ImportError('UnsupportedImage', `the ${sourceFormat} image has a backing file (${info.backingFile}); import a standalone image`);
    }
    await checkImage(received, sourceFormat, signal);
    const format = targetFormat(config, sourceFormat);
    let final = received;
    if (format !== sourceFormat) {
      if (format === 'iso' || format === 'vmdk' || format === 'vdi') throw new ImportError('InternalError', `cannot store as ${format}`);
      log.info({ from: sourceFormat, to: format }, 'converting');
      await convertImage(received, sourceFormat, converted, format, signal);
      await rm(received, { force: true });
      final = converted;
    }
    const finalSize = (await stat(final)).size;
    log.info({ sourceFormat, format, virtualSize: info.virtualSize, size: finalSize }, 'image verified');
    let destination: ImportSuccess['destination'];
    let storedSize = finalSize;
    if (destPath !== undefined) {
      await rename(final, destPath).catch((err: unknown) => {
        throw new ImportError('DestinationError', `cannot write ${destPath}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      });
      destination = { path: destPath };
    } else {
      const pushed = await pushToDvcr(config, signal, { path: final, size: finalSize, format, virtualSize: info.virtualSize }, ctx);
      destination = { registryURL: pushed.registryURL, digest: pushed.digest };
      storedSize = pushed.layerSize;
    }
    return { phase: 'Succeeded', source: config.IMPORTER_SOURCE, sourceFormat, format, virtualSize: info.virtualSize, storedSize, sourceSize: got.sourceSize, checksums: got.checksums, destination, durationMs: Date.now() - started };
  } finally {
    progress.finish();
    if (scratchDir !== undefined) await rm(scratchDir, { recursive: true, force: true });
    else await Promise.all([rm(received, { force: true }), rm(converted, { force: true })]);
  }
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
    throw new ImportError('InvalidConfiguration', `IMPORTER_DESTINATION_ENDPOINT: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const credentials = config.IMPORTER_DESTINATION_AUTH_CONFIG !== undefined ? credentialsFromDockerConfig(config.IMPORTER_DESTINATION_AUTH_CONFIG, ref.registry) : undefined;
  const client = new RegistryClient(ref, { credentials, tls: { ca: readCaDir(config.IMPORTER_CERT_DIR), insecure: config.DESTINATION_INSECURE_TLS }, timeoutMs: config.IMPORTER_HTTP_TIMEOUT, signal });
  ctx.log.info({ destination: endpoint, bytes: file.size }, 'pushing to DVCR');
  try {
    return await pushDisk(client, ref, file);
  } catch (err: unknown) {
    if (signal.aborted) throw new ImportError('Interrupted', 'the import was interrupted', { cause: err });
    throw new ImportError('DestinationError', `cannot push to DVCR ${endpoint}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}
