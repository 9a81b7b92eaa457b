/**
 * Open a source as a byte stream with its size when known: an HTTP(S) URL, a container image in a
 * registry (the first regular file under `disk/` of its layers, the containerDisk layout DVCR uses too),
 * or a local path (a PVC mount). Failures to reach or find the source are ImportErrors.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { ProtocolError, TimeoutError, UnavailableError, ValidationError, errorMessage } from '../../shared/errors/index.js';
import { credentialsFromDockerConfig } from '../../shared/oci/auth.js';
import { MEDIA, RegistryClient, type Descriptor, type Manifest } from '../../shared/oci/client.js';
import { send, type TlsOptions } from '../../shared/oci/http.js';
import { parseImageReference } from '../../shared/oci/reference.js';
import type { ImporterConfig } from './config.js';
import { ImportError } from './errors.js';

export interface OpenedSource {
  readonly body: AsyncIterable<Buffer>;
  /** Bytes the source will send, when it says. */
  readonly total: number | undefined;
}

/** CA certificates from a directory (*.crt, *.pem). */
export function readCaDir(dir: string | undefined): string[] {
  if (dir === undefined) return [];
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.crt') || f.endsWith('.pem'))
      .map((f) => readFileSync(join(dir, f), 'utf8'));
  } catch (err: unknown) {
    throw new ImportError('InvalidConfiguration', `cannot read CA certificates from ${dir}: ${errorMessage(err)}`, { cause: err });
  }
}

/** Map transport failures to reasons a person understands. */
export function sourceFailure(err: unknown, what: string): never {
  if (err instanceof ImportError) throw err;
  if (err instanceof TimeoutError) throw new ImportError('SourceUnreachable', `${what}: ${err.message}`, { cause: err });
  if (err instanceof UnavailableError) {
    if (err.upstreamStatus === 404) throw new ImportError('SourceNotFound', `${what}: not found (HTTP 404)`, { cause: err });
    if (err.upstreamStatus !== undefined) throw new ImportError('SourceHTTPError', `${what}: ${err.message}`, { cause: err });
    throw new ImportError('SourceUnreachable', `${what}: ${err.message}`, { cause: err });
  }
  if (err instanceof ProtocolError) throw new ImportError('SourceHTTPError', `${what}: ${err.message}`, { cause: err });
  if (err instanceof ValidationError) throw new ImportError('InvalidConfiguration', err.message, { cause: err });
  if (err instanceof Error && err.name === 'AbortError') throw new ImportError('Interrupted', 'the import was interrupted', { cause: err });
  throw err;
}

export async function openHttp(url: string, config: ImporterConfig, signal: AbortSignal): Promise<OpenedSource> {
  const tls: TlsOptions = { ca: readCaDir(config.IMPORTER_CERT_DIR), insecure: config.INSECURE_TLS };
  const shown = redact(url);
  try {
    const res = await send(url, { tls, timeoutMs: config.IMPORTER_HTTP_TIMEOUT, signal, headers: { 'accept-encoding': 'identity' } });
    if (res.status === 404) {
      res.body.resume();
      throw new ImportError('SourceNotFound', `${shown} was not found (HTTP 404)`);
    }
    if (res.status < 200 || res.status > 299) {
      res.body.resume();
      throw new ImportError('SourceHTTPError', `${shown} answered HTTP ${res.status}`);
    }
    const length = res.headers['content-length'];
    const total = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
    return { body: guardBody(res.body, shown), total };
  } catch (err: unknown) {
    return sourceFailure(err, `cannot download ${shown}`);
  }
}

/** A body that ends early (connection reset, timeout) fails the import instead of looking complete. */
async function* guardBody(body: AsyncIterable<Buffer>, what: string): AsyncGenerator<Buffer> {
  try {
    yield* body;
  } catch (err: unknown) {
    if (err instanceof ImportError) throw err;
    const message = errorMessage(err);
    throw new ImportError('SourceUnreachable', `the download of ${what} broke off: ${message}`, { cause: err });
  }
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password !== '') u.password = '***';
  return u.toString();
}

/** Pick the linux/amd64 manifest of an index, or the only one. */
function pickFromIndex(manifests: readonly Descriptor[]): Descriptor | undefined {
  return manifests.find((m) => m.platform?.os === 'linux' && m.platform.architecture === 'amd64') ?? (manifests.length === 1 ? manifests[0] : undefined);
}

/** `onSize` learns the disk file's size once its tar entry is reached (the total of the progress). */
export async function openRegistry(ref: string, config: ImporterConfig, signal: AbortSignal, onSize?: (bytes: number) => void): Promise<OpenedSource> {
  try {
    const image = parseImageReference(ref);
    const credentials = config.IMPORTER_AUTH_CONFIG !== undefined ? credentialsFromDockerConfig(config.IMPORTER_AUTH_CONFIG, image.registry) : undefined;
    const client = new RegistryClient(image, {
      credentials,
      tls: { ca: readCaDir(config.IMPORTER_CERT_DIR), insecure: config.INSECURE_TLS },
      timeoutMs: config.IMPORTER_HTTP_TIMEOUT,
      signal,
    });
    let { manifest } = await client.getManifest();
    if (manifest.manifests !== undefined) {
      const chosen = pickFromIndex(manifest.manifests);
      if (chosen === undefined) throw new ImportError('UnsupportedImage', `${ref} is a multi-platform index without a linux/amd64 image`);
      ({ manifest } = await client.getManifest(chosen.digest));
    }
    return { body: diskFileOf(client, manifest, ref, onSize), total: undefined };
  } catch (err: unknown) {
    return sourceFailure(err, `cannot pull ${ref}`);
  }
}

/** The content of the first regular file under `disk/` in the image's layers, last layer first. */
async function* diskFileOf(client: RegistryClient, manifest: Manifest, ref: string, onSize?: (bytes: number) => void): AsyncGenerator<Buffer> {
  const layers = [...(manifest.layers ?? [])].reverse();
  for (const layer of layers) {
    let res;
    try {
      res = await client.getBlob(layer.digest);
    } catch (err: unknown) {
      sourceFailure(err, `cannot read a layer of ${ref}`);
    }
    const gzip = layer.mediaType === MEDIA.ociLayerGzip || layer.mediaType === MEDIA.dockerLayerGzip || layer.mediaType.endsWith('+gzip');
    const stream: Readable = gzip ? res.body.pipe(createGunzip()) : res.body;
    // Failures reading the layer (the network; gzip's Z_* errors) are told apart from tar-stream's own
    // (a broken header, the archive ending inside an entry) by where they come from.
    const extract = tar.extract();
    const failures = new Set<unknown>();
    for (const s of new Set([res.body, stream])) {
      s.on('error', (err: unknown) => {
        failures.add(err);
        extract.destroy(err as Error);
      });
    }
    stream.pipe(extract);
    try {
      for await (const entry of extract) {
        if (entry.header.type === 'file' && /^(\.\/)?disk\/[^/]+$/.test(entry.header.name)) {
          onSize?.(entry.header.size ?? 0);
          yield* entry as AsyncIterable<Buffer>;
          return;
        }
        entry.resume();
      }
    } catch (err: unknown) {
      const gunzip = typeof err === 'object' && err !== null && 'code' in err && String(err.code).startsWith('Z_');
      if (!failures.has(err) || gunzip) {
        throw new ImportError('NotADiskImage', `${ref}: layer ${layer.digest} is not a readable tar archive (${errorMessage(err)})`, { cause: err });
      }
      throw err;
    } finally {
      extract.destroy();
      res.body.destroy();
    }
  }
  throw new ImportError('NotADiskImage', `${ref} holds no disk image (no file under disk/ in its layers)`);
}

export async function openFile(path: string): Promise<OpenedSource> {
  try {
    const info = await stat(path);
    return { body: createReadStream(path, { highWaterMark: 1 << 20 }), total: info.isFile() ? info.size : undefined };
  } catch (err: unknown) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
    throw new ImportError(code === 'ENOENT' ? 'SourceNotFound' : 'SourceUnreachable', `cannot read ${path}: ${errorMessage(err)}`, { cause: err });
  }
}
