/**
 * Store a disk image in DVCR as an OCI image (layout in docs/adr, "importer"): one uncompressed tar
 * layer holding `disk/disk.img` (the KubeVirt containerDisk layout, owner 107 = qemu), a config, and a
 * manifest annotated with the format and virtual size. The layer is streamed from the file and hashed
 * on the way, so the image is read once.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { MEDIA, RegistryClient, type Manifest } from '../../shared/oci/client.js';
import { formatImageReference, type ImageReference } from '../../shared/oci/reference.js';
import type { Progress } from './progress.js';

export const DISK_FILE = 'disk/disk.img';
export const ANNOTATION_FORMAT = 'virtualization.deckhouse.io/image-format';
export const ANNOTATION_VIRTUAL_SIZE = 'virtualization.deckhouse.io/image-virtual-size';
const QEMU_UID = 107;

export interface PushedImage {
  readonly registryURL: string;
  readonly digest: string;
  /** Bytes of the layer. */
  readonly layerSize: number;
}

/** The layer as tar-stream packs it: `disk/` and the disk file, owned by qemu, dated the epoch (so one
 *  disk always makes one digest). */
function layerOf(path: string, size: number): AsyncIterable<Buffer> {
  const pack = tar.pack();
  const owner = { uid: QEMU_UID, gid: QEMU_UID, mtime: new Date(0) };
  pack.entry({ name: 'disk/', type: 'directory', mode: 0o755, ...owner });
  const file = pack.entry({ name: DISK_FILE, size, mode: 0o644, ...owner }, (err) => (err ? pack.destroy(err) : pack.finalize()));
  const disk = createReadStream(path, { highWaterMark: 1 << 20 });
  disk.on('error', (err) => file.destroy(err));
  disk.pipe(file);
  return pack as AsyncIterable<Buffer>;
}

export async function pushDisk(
  client: RegistryClient,
  ref: ImageReference,
  file: { path: string; size: number; format: string; virtualSize: number },
  progress?: Progress,
): Promise<PushedImage> {
  const hash = createHash('sha256');
  let layerSize = 0;
  const body = Readable.from(
    (async function* (): AsyncGenerator<Buffer> {
      for await (const chunk of layerOf(file.path, file.size)) {
        hash.update(chunk);
        layerSize += chunk.length;
        progress?.add(chunk.length);
        yield chunk;
      }
    })(),
  );
  let layerDigest = '';
  await client.pushBlobStream(body, () => (layerDigest = `sha256:${hash.digest('hex')}`));

  const annotations = { [ANNOTATION_FORMAT]: file.format, [ANNOTATION_VIRTUAL_SIZE]: String(file.virtualSize) };
  const config = Buffer.from(
    JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Labels: annotations }, rootfs: { type: 'layers', diff_ids: [layerDigest] } }),
  );
  const configDigest = `sha256:${createHash('sha256').update(config).digest('hex')}`;
  await client.pushBlob(config, configDigest);
  const manifest: Manifest = {
    schemaVersion: 2,
    mediaType: MEDIA.ociManifest,
    config: { mediaType: MEDIA.ociConfig, digest: configDigest, size: config.length },
    layers: [{ mediaType: MEDIA.ociLayerTar, digest: layerDigest, size: layerSize }],
    annotations,
  };
  const digest = await client.putManifest(manifest, MEDIA.ociManifest);
  return { registryURL: formatImageReference(ref), digest, layerSize };
}
