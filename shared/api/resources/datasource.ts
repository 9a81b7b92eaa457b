/** The data source of a VirtualDisk, VirtualImage or ClusterVirtualImage, and status parts they share. */
import { z } from 'zod';
import { base64Bytes, fieldForType, withRules } from '../k8s/schema.js';

const hex = (bytes: number, name: string) =>
  z
    .string()
    .length(bytes * 2)
    .regex(/^[0-9a-fA-F]+$/)
    .optional()
    .describe(`${name} digest in hex.`);

const ChecksumSchema = z
  .strictObject({
    md5: hex(16, 'MD5'),
    sha1: hex(20, 'SHA-1'),
    sha256: hex(32, 'SHA-256'),
    sha512: hex(64, 'SHA-512'),
    streebog256: hex(32, 'Streebog-256 (GOST R 34.11-2012)'),
    streebog512: hex(64, 'Streebog-512 (GOST R 34.11-2012)'),
  })
  .describe('Expected checksums of the data; the import fails on a mismatch.');

export const IMAGE_REFERENCE =
  /^(?:[a-zA-Z0-9.-]+(?::[0-9]+)?\/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

const HttpSchema = z
  .strictObject({
    url: z.string().regex(/^https?:\/\/[^\s]+$/).describe('http or https URL of the image file.'),
    caBundle: base64Bytes().optional().describe('CA certificates (PEM, base64) to verify the server.'),
    checksum: ChecksumSchema.optional(),
  })
  .describe('Download from an HTTP(S) URL.');

const ContainerImageSchema = z
  .strictObject({
    image: z.string().regex(IMAGE_REFERENCE).describe('Container image reference holding the disk image.'),
    imagePullSecret: z
      .strictObject({ name: z.string().optional().describe('Secret name.') })
      .optional()
      .describe('Secret with registry credentials, in the namespace of the resource.'),
    caBundle: base64Bytes().optional().describe('CA certificates (PEM, base64) to verify the registry.'),
  })
  .describe('Import from a container image in a registry.');

const UploadSchema = z.strictObject({ checksum: ChecksumSchema.optional() }).describe('Upload by the user.');

export const DATA_SOURCE_TYPES = ['HTTP', 'ContainerImage', 'ObjectRef', 'Upload'] as const;

/** A dataSource with the given objectRef shape: exactly the sub-object matching `type` may be set. */
function dataSourceSchema<R extends z.ZodType>(objectRef: R) {
  return withRules(
    z.strictObject({
      type: z.enum(DATA_SOURCE_TYPES).describe('Where the data comes from.'),
      http: HttpSchema.optional(),
      containerImage: ContainerImageSchema.optional(),
      objectRef: objectRef.optional(),
      upload: UploadSchema.optional(),
    }),
    [
      fieldForType('http', 'HTTP'),
      fieldForType('containerImage', 'ContainerImage'),
      fieldForType('objectRef', 'ObjectRef'),
      fieldForType('upload', 'Upload', true),
    ],
  ).describe('Source of the initial data.');
}

/** objectRef fields: another image, disk or snapshot to copy from. */
function objectRefShape<const K extends readonly [string, ...string[]]>(kinds: K) {
  return {
    kind: z.enum(kinds).describe('Kind of the source object.'),
    name: z.string().describe('Name of the source object.'),
  };
}

const COPY_FROM = 'Copy from an existing object.';

export const VirtualDiskDataSourceSchema = dataSourceSchema(
  z.strictObject(objectRefShape(['ClusterVirtualImage', 'VirtualImage', 'VirtualDiskSnapshot'])).describe(COPY_FROM),
);

const IMAGE_SOURCES = ['ClusterVirtualImage', 'VirtualImage', 'VirtualDisk', 'VirtualDiskSnapshot'] as const;

export const VirtualImageDataSourceSchema = dataSourceSchema(z.strictObject(objectRefShape(IMAGE_SOURCES)).describe(COPY_FROM));

export const ClusterVirtualImageDataSourceSchema = dataSourceSchema(
  withRules(
    z.strictObject({
      ...objectRefShape(IMAGE_SOURCES),
      namespace: z.string().optional().describe('Namespace of a namespaced source object.'),
    }),
    [
      {
        rule: "self.kind == 'ClusterVirtualImage' || (has(self.namespace) && size(self.namespace) < 64)",
        message: 'namespace is required (at most 63 characters) for a namespaced source',
        fieldPath: '.namespace',
        holds: (s) => s.kind === 'ClusterVirtualImage' || (s.namespace !== undefined && s.namespace.length < 64),
      },
    ],
  ).describe(COPY_FROM),
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
