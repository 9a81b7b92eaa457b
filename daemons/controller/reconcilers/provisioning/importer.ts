/**
 * The importer and uploader Pods (daemons/importer, contract in its README): the Pod the controller
 * creates for one provisioning step, and the result it reads back from the container's termination
 * message. One program serves every step; the environment says what to read and where to write.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { KubeObject, OwnerReference } from '../../../../shared/kube/index.js';
import { ownerReferenceTo } from '../../../../shared/kube/index.js';
import type { HelperPod, Service } from './kube.js';

/** Checksums as the data source states them (hex digests). */
export type Checksums = Partial<Record<'md5' | 'sha1' | 'sha256' | 'sha512' | 'streebog256' | 'streebog512', string>>;

/** What a step reads. */
export type ImportSource =
  | { type: 'http'; url: string; checksums?: Checksums | undefined; caBundle?: string | undefined }
  | { type: 'registry'; image: string; pullSecret?: string | undefined; caBundle?: string | undefined }
  | { type: 'upload'; checksums?: Checksums | undefined }
  /** The disk of another PVC (an image or disk on a PVC): its file, mounted read-only, or its block device. */
  | { type: 'pvc'; claimName: string; volumeMode?: string | undefined };

/** Where a step writes: an image in DVCR (`repo:tag` under the DVCR address) or a PVC (its disk file, or the device of a Block claim). */
export type ImportDestination = { type: 'dvcr'; repo: string } | { type: 'pvc'; claimName: string; volumeMode?: string | undefined };

/** The steps of provisioning; each has at most one Pod per owner. */
export type HelperStep = 'import' | 'upload' | 'pvc';

export interface HelperSettings {
  /** The importer image (runs daemons/importer/main). */
  image: string;
  /** DVCR as `host[:port]`; images are pushed to `<address>/<repo>`. */
  dvcrAddress: string;
  /** DVCR speaks plain HTTP (loopback registries in tests, development). */
  dvcrInsecure: boolean;
  /** How long an uploader waits for an upload to start. */
  uploadWaitTimeout: string;
}

export const HELPER_LABEL = 'virtualization.deckhouse.io/helper';
export const HELPER_POD_LABEL = 'virtualization.deckhouse.io/helper-pod';
export const OWNER_UID_LABEL = 'virtualization.deckhouse.io/owner-uid';
/** `Kind/namespace/name` (or `Kind/name`) of the object a helper works for: events map back to its key. */
export const OWNER_ANNOTATION = 'virtualization.deckhouse.io/owner';

export const CONTAINER = 'importer';
export const UPLOAD_PORT = 8444;
export const METRICS_PORT = 8080;
/** Where a PVC is mounted in the helper and the file that holds the disk (KubeVirt's filesystem layout). */
export const DATA_DIR = '/data';
export const SOURCE_DIR = '/source';
export const DISK_FILE = 'disk.img';
/** Where a Block claim appears in the helper (`volumeDevices`), as the original's pvc-importer has them. */
export const DATA_DEVICE = '/dev/pvc-importer-block-volume';
export const SOURCE_DEVICE = '/dev/source-block-volume';
const TERMINATION_LOG = '/dev/termination-log';

/** The owner annotation value of an object. */
export function ownerTag(kind: string, namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? `${kind}/${name}` : `${kind}/${namespace}/${name}`;
}

/** A DNS-1123 name from parts, shortened with a hash of the whole when longer than `max`. */
export function shortName(parts: readonly string[], max = 63): string {
  const full = parts.join('-');
  if (full.length <= max) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, max - 9).replace(/-+$/, '')}-${hash}`;
}

const KIND_SHORT: Record<string, string> = { VirtualImage: 'vi', ClusterVirtualImage: 'cvi', VirtualDisk: 'vd', PersistentVolumeClaim: 'pvc' };

/** The Pod name of a step for an owner, e.g. `d8v-import-vi-ubuntu`. */
export function helperPodName(step: HelperStep, owner: KubeObject): string {
  return shortName(['d8v', step, KIND_SHORT[owner.kind ?? ''] ?? 'obj', owner.metadata.name ?? '']);
}

/** The image reference of a DVCR repo as the importer takes it (`http://` for a plain-HTTP registry). */
export function dvcrRef(settings: HelperSettings, repo: string): string {
  return `${settings.dvcrInsecure ? 'http://' : ''}${settings.dvcrAddress}/${repo}`;
}

/** The location written to status.target.registryURL (without the scheme). */
export function registryURL(settings: HelperSettings, repo: string): string {
  return `${settings.dvcrAddress}/${repo}`;
}

/** The importer's endpoint for an image in DVCR given by its registryURL. */
export function dvcrEndpoint(settings: HelperSettings, url: string): string {
  return settings.dvcrInsecure && !url.startsWith('http') ? `http://${url}` : url;
}

export interface HelperPodInput {
  step: HelperStep;
  owner: KubeObject;
  /** Where the Pod runs (the owner's namespace; a cluster image's helpers run in the controller's or the source's). */
  namespace: string;
  source: ImportSource;
  destination: ImportDestination;
  /** A ConfigMap with `ca.crt`, mounted as the importer's certificate directory. */
  caConfigMap?: string | undefined;
}

type EnvVar = { name: string; value: string };

/** The importer Pod for one step. */
export function helperPod(settings: HelperSettings, input: HelperPodInput): HelperPod {
  const { owner, step } = input;
  const name = helperPodName(step, owner);
  const env: EnvVar[] = [
    { name: 'IMPORTER_TERMINATION_LOG', value: TERMINATION_LOG },
    { name: 'IMPORTER_METRICS_PORT', value: String(METRICS_PORT) },
  ];
  const volumes: object[] = [];
  const mounts: object[] = [];
  const devices: object[] = [];
  const src = input.source;
  switch (src.type) {
    case 'http':
      env.push({ name: 'IMPORTER_SOURCE', value: 'http' }, { name: 'IMPORTER_ENDPOINT', value: src.url });
      if (src.checksums !== undefined) env.push({ name: 'IMPORTER_CHECKSUMS', value: JSON.stringify(src.checksums) });
      break;
    case 'registry':
      env.push({ name: 'IMPORTER_SOURCE', value: 'registry' }, { name: 'IMPORTER_ENDPOINT', value: src.image });
      if (src.pullSecret !== undefined) {
        env.push({ name: 'IMPORTER_AUTH_CONFIG', value: '/auth/.dockerconfigjson' });
        volumes.push({ name: 'auth', secret: { secretName: src.pullSecret } });
        mounts.push({ name: 'auth', mountPath: '/auth', readOnly: true });
      }
      break;
    case 'upload':
      env.push(
        { name: 'IMPORTER_SOURCE', value: 'upload' },
        { name: 'UPLOADER_PORT', value: String(UPLOAD_PORT) },
        { name: 'UPLOADER_WAIT_TIMEOUT', value: settings.uploadWaitTimeout },
      );
      if (src.checksums !== undefined) env.push({ name: 'IMPORTER_CHECKSUMS', value: JSON.stringify(src.checksums) });
      break;
    case 'pvc': {
      const block = src.volumeMode === 'Block';
      env.push({ name: 'IMPORTER_SOURCE', value: 'file' }, { name: 'IMPORTER_ENDPOINT', value: block ? SOURCE_DEVICE : `${SOURCE_DIR}/${DISK_FILE}` });
      volumes.push({ name: 'source', persistentVolumeClaim: { claimName: src.claimName, readOnly: true } });
      if (block) devices.push({ name: 'source', devicePath: SOURCE_DEVICE });
      else mounts.push({ name: 'source', mountPath: SOURCE_DIR, readOnly: true });
      break;
    }
  }
  if (input.caConfigMap !== undefined) {
    env.push({ name: 'IMPORTER_CERT_DIR', value: '/certs' });
    volumes.push({ name: 'certs', configMap: { name: input.caConfigMap } });
    mounts.push({ name: 'certs', mountPath: '/certs', readOnly: true });
  }
  const dst = input.destination;
  if (dst.type === 'dvcr') {
    env.push({ name: 'IMPORTER_DESTINATION_ENDPOINT', value: dvcrRef(settings, dst.repo) });
  } else if (dst.volumeMode === 'Block') {
    // A Block claim is a device, not a directory: written in place, never created or renamed.
    env.push({ name: 'IMPORTER_DESTINATION_DEVICE', value: DATA_DEVICE }, { name: 'IMPORTER_DESTINATION_FORMAT', value: 'raw' });
    volumes.push({ name: 'data', persistentVolumeClaim: { claimName: dst.claimName } });
    devices.push({ name: 'data', devicePath: DATA_DEVICE });
  } else {
    env.push({ name: 'IMPORTER_DESTINATION_PATH', value: `${DATA_DIR}/${DISK_FILE}` }, { name: 'IMPORTER_DESTINATION_FORMAT', value: 'raw' });
    volumes.push({ name: 'data', persistentVolumeClaim: { claimName: dst.claimName } });
    mounts.push({ name: 'data', mountPath: DATA_DIR });
  }
  const ports = [{ name: 'metrics', containerPort: METRICS_PORT }];
  if (src.type === 'upload') ports.push({ name: 'upload', containerPort: UPLOAD_PORT });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: input.namespace,
      labels: { [HELPER_LABEL]: step, [HELPER_POD_LABEL]: name, [OWNER_UID_LABEL]: owner.metadata.uid ?? '' },
      annotations: { [OWNER_ANNOTATION]: ownerTag(owner.kind ?? '', owner.metadata.namespace, owner.metadata.name ?? '') },
      ownerReferences: [{ ...ownerRef(owner) }],
    },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: CONTAINER,
          image: settings.image,
          imagePullPolicy: 'IfNotPresent',
          env,
          ports,
          volumeMounts: mounts,
          ...(devices.length > 0 ? { volumeDevices: devices } : {}),
          terminationMessagePath: TERMINATION_LOG,
          terminationMessagePolicy: 'FallbackToLogsOnError',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
        },
      ],
      volumes,
    },
  };
}

/** The Service in front of an uploader Pod (port 80 to the upload port). */
export function uploaderService(pod: HelperPod): Service {
  const name = pod.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: pod.metadata.namespace,
      labels: { [HELPER_LABEL]: 'upload' },
      ...(pod.metadata.annotations !== undefined ? { annotations: pod.metadata.annotations } : {}),
      ...(pod.metadata.ownerReferences !== undefined ? { ownerReferences: pod.metadata.ownerReferences } : {}),
    },
    spec: { selector: { [HELPER_POD_LABEL]: name }, ports: [{ name: 'upload', port: 80, targetPort: UPLOAD_PORT }] },
  };
}

/** The in-cluster upload URL of an uploader Service. */
export function uploadURL(service: { name: string; namespace: string }): string {
  return `http://${service.name}.${service.namespace}.svc/upload`;
}

function ownerRef(owner: KubeObject): OwnerReference {
  return ownerReferenceTo(owner, { controller: true, blockOwnerDeletion: true });
}

/** The importer's success result (termination message). */
export const ImportResultSchema = z.looseObject({
  phase: z.literal('Succeeded'),
  format: z.string(),
  sourceFormat: z.string().optional(),
  virtualSize: z.number().nonnegative(),
  storedSize: z.number().nonnegative().optional(),
  destination: z.looseObject({ registryURL: z.string().optional(), path: z.string().optional() }).optional(),
});
export type ImportResult = z.infer<typeof ImportResultSchema>;

const FailureSchema = z.looseObject({ phase: z.literal('Failed'), reason: z.string(), message: z.string() });

/** How a helper Pod stands. */
export type HelperOutcome =
  | { state: 'running'; pod: HelperPod }
  | { state: 'succeeded'; pod: HelperPod; result: ImportResult }
  | { state: 'failed'; pod: HelperPod; reason: string; message: string };

/** Read a helper Pod: still running, done with a result, or failed with the importer's reason. */
export function outcomeOf(pod: HelperPod): HelperOutcome {
  const phase = pod.status?.phase;
  if (phase !== 'Succeeded' && phase !== 'Failed') return { state: 'running', pod };
  const term = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.state?.terminated;
  const text = term?.message?.trim() ?? '';
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const ok = ImportResultSchema.safeParse(parsed);
  if (phase === 'Succeeded' && ok.success) return { state: 'succeeded', pod, result: ok.data };
  const failure = FailureSchema.safeParse(parsed);
  if (failure.success) return { state: 'failed', pod, reason: failure.data.reason, message: failure.data.message };
  const why = phase === 'Succeeded' ? 'ended without a readable result' : `failed (${term?.reason ?? pod.status?.message ?? 'no reason given'})`;
  const tail = text === '' ? '' : `: ${text.slice(-512)}`;
  return { state: 'failed', pod, reason: 'InternalError', message: `the importer ${why}${tail}` };
}

/** Progress in percent from the importer's metrics text (`importer_progress_ratio`), e.g. "42.1%". */
export function progressFromMetrics(text: string): string | undefined {
  const line = text.split('\n').find((l) => l.startsWith('importer_progress_ratio'));
  const value = line === undefined ? Number.NaN : Number(line.trim().split(/\s+/).at(-1));
  if (!Number.isFinite(value)) return undefined;
  return `${(Math.min(1, Math.max(0, value)) * 100).toFixed(1)}%`;
}

/** The PVC size for an image of `virtualSize` bytes: rounded up to whole MiB. */
export function sizeForImage(virtualSize: number): number {
  const mib = 1024 * 1024;
  return Math.ceil(virtualSize / mib) * mib;
}
