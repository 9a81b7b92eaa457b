/**
 * A data source (spec.dataSource of a VirtualImage, ClusterVirtualImage or VirtualDisk) resolved into
 * what the importer reads, or why it cannot be read yet.
 */
import { NotFoundError } from '../../../../shared/errors/index.js';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import { dvcrEndpoint, type ImportSource } from './importer.js';
import type { StorageDeps } from './helpers.js';

type AnySource = NonNullable<VirtualDisk['spec']['dataSource']> | VirtualImage['spec']['dataSource'] | ClusterVirtualImage['spec']['dataSource'];

/** Why a source cannot be used (each reconciler maps it to its own condition reason). */
export type SourceProblem = 'secretNotFound' | 'notFound' | 'notReady' | 'inUse' | 'unsupported';

/** What is known about the data before the import when the source is an image already provisioned. */
export interface KnownImage {
  format?: string | undefined;
  unpackedBytes?: number | undefined;
  cdrom: boolean;
  /** The image sits in DVCR: a disk is filled from it directly, without a copy into DVCR first. */
  inDVCR: boolean;
}

export type SourcePlan =
  | { ok: true; source: ImportSource; sourceUID?: string | undefined; sourceNamespace?: string | undefined; image?: KnownImage }
  | { ok: false; problem: SourceProblem; kind: string; message: string };

/**
 * Resolve a data source of an object in `namespace` (undefined for a cluster image, whose namespaced
 * sources name their namespace). Reads the caches, and the pull Secret from the apiserver.
 */
export async function resolveSource(d: StorageDeps, ds: AnySource, namespace: string | undefined, signal: AbortSignal): Promise<SourcePlan> {
  switch (ds.type) {
    case 'HTTP': {
      if (ds.http === undefined) return { ok: false, problem: 'unsupported', kind: 'HTTP', message: 'dataSource.http is missing' };
      return { ok: true, source: { type: 'http', url: ds.http.url, checksums: ds.http.checksum, caBundle: ds.http.caBundle } };
    }
    case 'ContainerImage': {
      const ci = ds.containerImage;
      if (ci === undefined) return { ok: false, problem: 'unsupported', kind: 'ContainerImage', message: 'dataSource.containerImage is missing' };
      const secret = ci.imagePullSecret?.name;
      const secretNs = (ci.imagePullSecret as { namespace?: string } | undefined)?.namespace ?? namespace;
      if (secret !== undefined) {
        if (secretNs === undefined)
          return { ok: false, problem: 'secretNotFound', kind: 'Secret', message: `the namespace of the pull Secret ${secret} is not set` };
        if (!(await secretExists(d, secretNs, secret, signal))) {
          return { ok: false, problem: 'secretNotFound', kind: 'Secret', message: `the pull Secret ${secretNs}/${secret} does not exist` };
        }
      }
      return {
        ok: true,
        source: { type: 'registry', image: ci.image, pullSecret: secret, caBundle: ci.caBundle },
        sourceNamespace: secret !== undefined ? secretNs : undefined,
      };
    }
    case 'Upload':
      return { ok: true, source: { type: 'upload', checksums: ds.upload?.checksum } };
    case 'ObjectRef': {
      const ref = ds.objectRef;
      if (ref === undefined) return { ok: false, problem: 'unsupported', kind: 'ObjectRef', message: 'dataSource.objectRef is missing' };
      const refNs = 'namespace' in ref && typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : namespace;
      return resolveObjectRef(d, ref.kind, ref.name, refNs);
    }
  }
}

function resolveObjectRef(d: StorageDeps, kind: string, name: string, ns: string | undefined): SourcePlan {
  const where = ns === undefined || kind === 'ClusterVirtualImage' ? name : `${ns}/${name}`;
  switch (kind) {
    case 'ClusterVirtualImage':
    case 'VirtualImage': {
      const image = kind === 'ClusterVirtualImage' ? d.caches.clusterImages.get(name) : d.caches.images.get(`${ns ?? ''}/${name}`);
      if (image === undefined) return { ok: false, problem: 'notFound', kind, message: `${kind} ${where} does not exist` };
      const st = image.status;
      if (st?.phase !== 'Ready') return { ok: false, problem: 'notReady', kind, message: `${kind} ${where} is not ready (phase ${st?.phase ?? 'Pending'})` };
      const known: KnownImage = {
        format: st.format,
        unpackedBytes: st.size?.unpackedBytes !== undefined ? Number(st.size.unpackedBytes) : undefined,
        cdrom: st.cdrom === true,
        inDVCR: false,
      };
      const pvc = st.target !== undefined && 'persistentVolumeClaimName' in st.target ? st.target.persistentVolumeClaimName : undefined;
      if (pvc !== undefined) return { ok: true, source: pvcSource(d, ns, pvc), sourceUID: image.metadata.uid, sourceNamespace: ns, image: known };
      const url = st.target?.registryURL;
      if (url === undefined) return { ok: false, problem: 'notReady', kind, message: `${kind} ${where} has no storage location` };
      return {
        ok: true,
        source: { type: 'registry', image: dvcrEndpoint(d.storage.settings, url) },
        sourceUID: image.metadata.uid,
        image: { ...known, inDVCR: true },
      };
    }
    case 'VirtualDisk': {
      const vd = d.caches.disks.get(`${ns ?? ''}/${name}`);
      if (vd === undefined) return { ok: false, problem: 'notFound', kind, message: `VirtualDisk ${where} does not exist` };
      const pvc = vd.status?.target?.persistentVolumeClaimName;
      if (vd.status?.phase !== 'Ready' || pvc === undefined) {
        return { ok: false, problem: 'notReady', kind, message: `VirtualDisk ${where} is not ready (phase ${vd.status?.phase ?? 'Pending'})` };
      }
      if ((vd.status.attachedToVirtualMachines ?? []).some((a) => a.mounted === true)) {
        return { ok: false, problem: 'inUse', kind, message: `VirtualDisk ${where} is in use by a running virtual machine` };
      }
      return { ok: true, source: pvcSource(d, ns, pvc), sourceUID: vd.metadata.uid, sourceNamespace: ns };
    }
    default:
      return { ok: false, problem: 'unsupported', kind, message: `copying from a ${kind} is not supported by this controller yet` };
  }
}

async function secretExists(d: StorageDeps, namespace: string, name: string, signal: AbortSignal): Promise<boolean> {
  try {
    await d.clients.secrets.get({ namespace, name }, { signal });
    return true;
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

/** A disk snapshot resolved into the VolumeSnapshot a new claim is filled from. */
export type SnapshotPlan =
  | { ok: true; volumeSnapshotName: string; restoreSize: string | undefined; sourceUID: string | undefined }
  | { ok: false; problem: SourceProblem; kind: string; message: string };

/**
 * A VirtualDiskSnapshot as the source of a disk: it must be Ready and its VolumeSnapshot ready to use.
 * Read from the apiserver (the storage reconcilers keep no snapshot caches; a waiting disk looks again).
 */
export async function resolveSnapshot(d: StorageDeps, name: string, ns: string, signal: AbortSignal): Promise<SnapshotPlan> {
  const kind = 'VirtualDiskSnapshot';
  const c = d.storage.clients;
  const vds = await getOrUndefined(() => c.vdSnapshots.get({ namespace: ns, name }, { signal }));
  if (vds === undefined) return { ok: false, problem: 'notFound', kind, message: `VirtualDiskSnapshot ${ns}/${name} does not exist` };
  const vsName = vds.status?.volumeSnapshotName;
  if (vds.status?.phase !== 'Ready' || vsName === undefined) {
    return { ok: false, problem: 'notReady', kind, message: `VirtualDiskSnapshot ${ns}/${name} is not ready (phase ${vds.status?.phase ?? 'Pending'})` };
  }
  const vs = await getOrUndefined(() => c.volumeSnapshots.get({ namespace: ns, name: vsName }, { signal }));
  if (vs?.status?.readyToUse !== true) {
    return { ok: false, problem: 'notReady', kind, message: `the VolumeSnapshot ${vsName} of VirtualDiskSnapshot ${ns}/${name} is not ready to use` };
  }
  return { ok: true, volumeSnapshotName: vsName, restoreSize: vs.status.restoreSize, sourceUID: vds.metadata.uid };
}

async function getOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** A claim as a source, with its volume mode (a Block claim is read as a device). */
function pvcSource(d: StorageDeps, ns: string | undefined, claimName: string): ImportSource {
  return { type: 'pvc', claimName, volumeMode: d.storage.caches.pvcs.get(`${ns ?? ''}/${claimName}`)?.spec.volumeMode };
}
