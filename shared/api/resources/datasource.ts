/** The data source of a VirtualDisk, VirtualImage or ClusterVirtualImage, and status parts they share. */
import { z } from 'zod';
import { base64Bytes, fieldForType, withRules } from '../k8s/schema.js';

const hex = (bytes: number, name: string) =>
  z
    .string()
    .length(bytes * 2)
    .regex(new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`), `must be ${bytes * 2} hex digits`)
    .optional()
    .describe(`${name} digest in hex.`);

const CHECKSUM_DESCRIPTION = 'Expected checksums of the data; the import fails on a mismatch.';
const md5 = hex(16, 'MD5');
const sha256 = hex(32, 'SHA-256');

const ChecksumSchema = z
  .strictObject({
    md5,
    sha1: hex(20, 'SHA-1'),
    sha256,
    sha512: hex(64, 'SHA-512'),
    streebog256: hex(32, 'Streebog-256 (GOST R 34.11-2012)'),
    streebog512: hex(64, 'Streebog-512 (GOST R 34.11-2012)'),
  })
  .describe(CHECKSUM_DESCRIPTION);

/** The checksums of the original's pool disk templates (md5 and sha256 only). */
const PoolChecksumSchema = z.strictObject({ md5, sha256 }).describe(CHECKSUM_DESCRIPTION);

/**
 * A container image reference in the OCI distribution grammar (distribution/reference): an optional
 * registry host (DNS name or [IPv6], optional port), path components of lower-case alphanumerics
 * joined by `.`, `_`, `__` or dashes, an optional tag, and an optional digest of any algorithm
 * (`sha256:`, `sha512:`, `multihash+base58:`...). Written without named groups or lookarounds so the
 * same text works in the apiserver (RE2) and in JavaScript.
 */
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
export const IMAGE_REFERENCE = new RegExp(`^(?:${HOST}(?::[0-9]+)?/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@${DIGEST})?$`);

/** An http(s) URL as the original's pattern has it (printable ASCII except space, `"`, `#`, `` ` ``, `{|}~`). */
export const HTTP_URL = new RegExp(String.raw`^http[s]?:\/\/(?:[a-zA-Z]|[0-9]|[$-_@.&+]|[!*\(\),]|(?:%[0-9a-fA-F][0-9a-fA-F]))+$`);

const httpSchema = <C extends z.ZodType>(checksum: C) =>
  z
    .strictObject({
      url: z.string().regex(HTTP_URL, 'must be an http or https URL').describe('http or https URL of the image file.'),
      caBundle: base64Bytes().optional().describe('CA certificates (PEM, base64) to verify the server.'),
      checksum: checksum.optional(),
    })
    .describe('Download from an HTTP(S) URL.');

const secretName = z.string().min(1).optional().describe('Secret name.');

const containerImageSchema = <S extends z.ZodRawShape>(pullSecret: S, where: string) =>
  z
    .strictObject({
      image: z
        .string()
        .regex(IMAGE_REFERENCE, 'must be a container image reference such as registry.example.com/images/ubuntu:22.04')
        .describe('Container image reference holding the disk image.'),
      imagePullSecret: z.strictObject(pullSecret).optional().describe(`Secret with registry credentials, ${where}.`),
      caBundle: base64Bytes().optional().describe('CA certificates (PEM, base64) to verify the registry.'),
    })
    .describe('Import from a container image in a registry.');

const ContainerImageSchema = containerImageSchema({ name: secretName }, 'in the namespace of the resource');

/** A cluster-wide image names the namespace of its pull secret. */
const ClusterContainerImageSchema = containerImageSchema(
  { name: secretName, namespace: z.string().min(1).optional().describe('Namespace of the Secret.') },
  'in the given namespace',
);

const UploadSchema = z.strictObject({ checksum: ChecksumSchema.optional() }).describe('Upload by the user.');

export const DATA_SOURCE_TYPES = ['HTTP', 'ContainerImage', 'ObjectRef', 'Upload'] as const;

const DATA_SOURCE_DESCRIPTION = 'Source of the initial data.';
const typeField = z.enum(DATA_SOURCE_TYPES).describe('Where the data comes from.');

/** A dataSource with the given objectRef shape: exactly the sub-object matching `type` may be set. */
function dataSourceSchema<R extends z.ZodType, C extends z.ZodType>(objectRef: R, containerImage: C) {
  return withRules(
    z.strictObject({
      type: typeField,
      http: httpSchema(ChecksumSchema).optional(),
      containerImage: containerImage.optional(),
      objectRef: objectRef.optional(),
      upload: UploadSchema.optional(),
    }),
    [
      fieldForType('http', 'HTTP'),
      fieldForType('containerImage', 'ContainerImage'),
      fieldForType('objectRef', 'ObjectRef'),
      fieldForType('upload', 'Upload', true),
    ],
  ).describe(DATA_SOURCE_DESCRIPTION);
}

/** objectRef fields: another image, disk or snapshot to copy from. */
function objectRefShape<const K extends readonly [string, ...string[]]>(kinds: K) {
  return {
    kind: z.enum(kinds).describe('Kind of the source object.'),
    name: z.string().min(1).describe('Name of the source object.'),
  };
}

const COPY_FROM = 'Copy from an existing object.';

const DiskCopySourceSchema = z.strictObject(objectRefShape(['ClusterVirtualImage', 'VirtualImage', 'VirtualDiskSnapshot'])).describe(COPY_FROM);

export const VirtualDiskDataSourceSchema = dataSourceSchema(DiskCopySourceSchema, ContainerImageSchema);

/**
 * A pool disk template's dataSource, as the original's pool CRD has it: the checksums md5 and sha256
 * only and no upload settings (a member's disk is never waiting for a person's upload settings).
 */
export const PoolDiskDataSourceSchema = withRules(
  z.strictObject({
    type: typeField,
    http: httpSchema(PoolChecksumSchema).optional(),
    containerImage: ContainerImageSchema.optional(),
    objectRef: DiskCopySourceSchema.optional(),
  }),
  [fieldForType('http', 'HTTP'), fieldForType('containerImage', 'ContainerImage'), fieldForType('objectRef', 'ObjectRef')],
).describe(DATA_SOURCE_DESCRIPTION);

const IMAGE_SOURCES = ['ClusterVirtualImage', 'VirtualImage', 'VirtualDisk', 'VirtualDiskSnapshot'] as const;

export const VirtualImageDataSourceSchema = dataSourceSchema(z.strictObject(objectRefShape(IMAGE_SOURCES)).describe(COPY_FROM), ContainerImageSchema);

export const ClusterVirtualImageDataSourceSchema = dataSourceSchema(
  withRules(
    z.strictObject({
      ...objectRefShape(IMAGE_SOURCES),
      namespace: z.string().optional().describe('Namespace of a namespaced source object.'),
    }),
    [
      {
        rule: "self.kind == 'ClusterVirtualImage' || (has(self.namespace) && size(self.namespace) > 0)",
        message: 'The namespace is required for VirtualDisk, VirtualImage and VirtualDiskSnapshot',
        fieldPath: '.namespace',
        reason: 'FieldValueRequired',
        holds: (s) => s.kind === 'ClusterVirtualImage' || (s.namespace !== undefined && s.namespace.length > 0),
      },
      {
        rule: "self.kind == 'ClusterVirtualImage' || !has(self.namespace) || size(self.namespace) < 64",
        message: 'The namespace must be no longer than 63 characters.',
        fieldPath: '.namespace',
        holds: (s) => s.kind === 'ClusterVirtualImage' || s.namespace === undefined || [...s.namespace].length < 64,
      },
    ],
  ).describe(COPY_FROM),
  ClusterContainerImageSchema,
);

export const DownloadSpeedSchema = z
  .strictObject({
    avg: z.string().optional().describe('Average speed, human readable.'),
    avgBytes: z.string().optional().describe('Average speed in bytes per second.'),
    current: z.string().optional().describe('Current speed, human readable.'),
    currentBytes: z.string().optional().describe('Current speed in bytes per second.'),
  })
  .describe('Import speed.');

export const ImageUploadURLsSchema = z
  .strictObject({
    external: z.string().optional().describe('Upload URL reachable from outside the cluster.'),
    inCluster: z.string().optional().describe('Upload URL reachable from inside the cluster.'),
  })
  .describe('Where to upload data for an Upload data source.');
