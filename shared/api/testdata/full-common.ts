/** Pieces shared by the full objects of the round-trip test. */
import type { Condition } from '../k8s/core.js';

export const T = '2026-01-02T03:04:05Z';

export const condition = (type: string, reason = type): Condition => ({
  type,
  status: 'True',
  observedGeneration: 1,
  lastTransitionTime: T,
  reason,
  message: `${type} is fine`,
});

export const labelSelector = {
  matchLabels: { app: 'db' },
  matchExpressions: [{ key: 'tier', operator: 'In', values: ['backend'] }],
};

export const toleration = { key: 'dedicated', operator: 'Equal', value: 'vm', effect: 'NoExecute', tolerationSeconds: 30 };

const hex = (n: number) => 'ab'.repeat(n);
const checksum = { md5: hex(16), sha1: hex(20), sha256: hex(32), sha512: hex(64), streebog256: hex(32), streebog512: hex(64) };
const caBundle = Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64');

/** The checksums and upload settings of a pool disk template (the original's: md5 and sha256, no upload object). */
const poolChecksum = { md5: checksum.md5, sha256: checksum.sha256 };

/** One data source of each type (the types exclude each other); `pool`: as a pool disk template takes them. */
export const dataSources = (
  objectRef: Record<string, unknown>,
  imagePullSecret: Record<string, unknown> = { name: 'pull' },
  pool = false,
): Record<string, unknown>[] => [
  { type: 'HTTP', http: { url: 'https://images.example.com/ubuntu.qcow2', caBundle, checksum: pool ? poolChecksum : checksum } },
  {
    type: 'ContainerImage',
    containerImage: { image: 'registry.example.com/images/ubuntu:24.04', imagePullSecret, caBundle },
  },
  { type: 'ObjectRef', objectRef },
  pool ? { type: 'Upload' } : { type: 'Upload', upload: { checksum } },
];
