import { z } from 'zod';
import { env, parseConfig } from '../../shared/config/index.js';

const hex = (len: number, name: string): z.ZodString => z.string().regex(new RegExp(`^[0-9a-fA-F]{${len}}$`), `${name} must be ${len} hex digits`);

/** spec.dataSource.http.checksum: `{"md5": "...", "sha256": "..."}`, either or both. */
export const ChecksumsSchema = z.strictObject({ md5: hex(32, 'md5').optional(), sha256: hex(64, 'sha256').optional() });
export type Checksums = z.infer<typeof ChecksumsSchema>;

const checksumsJson = z
  .string()
  .optional()
  .transform((text, ctx): Checksums => {
    if (text === undefined) return {};
    try {
      const parsed = ChecksumsSchema.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data;
      ctx.addIssue({ code: 'custom', message: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') });
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON such as {"sha256":"<64 hex digits>"}' });
    }
    return {};
  });

export const SOURCES = ['http', 'registry', 'upload', 'file'] as const;
export type SourceKind = (typeof SOURCES)[number];

/** Environment of the importer/uploader (one program, one run): every key documented, with a default. */
export const ImporterConfigSchema = z
  .object({
    IMPORTER_SOURCE: z
      .enum(SOURCES)
      .describe(
        'Where the image comes from: http (a URL), registry (a container image), upload (an HTTP endpoint receiving the body), file (a path: a PVC mount or block device).',
      ),
    IMPORTER_ENDPOINT: env
      .optionalString()
      .describe('The URL (http), image reference `[http://]host[:port]/repo[:tag|@digest]` (registry) or path (file); unused for upload.'),
    IMPORTER_CHECKSUMS: checksumsJson.describe('Expected checksums of the source bytes as JSON {"md5":..,"sha256":..}; a mismatch fails the import.'),
    IMPORTER_AUTH_CONFIG: env.optionalString().describe('A .dockerconfigjson file with credentials for a registry source.'),
    IMPORTER_CERT_DIR: env.optionalString().describe('Directory of CA certificates (*.crt, *.pem) trusted for the source, besides the system ones.'),
    INSECURE_TLS: env.bool(false).describe("Do not verify the source's TLS certificate."),
    IMPORTER_DESTINATION_ENDPOINT: env.optionalString().describe('DVCR image reference `[http://]host[:port]/repo:tag` to push the image to.'),
    IMPORTER_DESTINATION_AUTH_CONFIG: env.optionalString().describe('A .dockerconfigjson file with credentials for DVCR.'),
    DESTINATION_INSECURE_TLS: env.bool(false).describe("Do not verify DVCR's TLS certificate."),
    IMPORTER_DESTINATION_PATH: env.optionalString().describe('A file (on a PVC) to write the image to; written as <path>.importing and renamed when complete.'),
    IMPORTER_DESTINATION_DEVICE: env
      .optionalString()
      .describe('A block device (a Block PVC in volumeDevices) to write the raw image into, in place: never created, truncated or renamed.'),
    IMPORTER_DESTINATION_FORMAT: z
      .enum(['raw', 'qcow2', 'source'])
      .optional()
      .describe(
        'Format at the destination: raw (default for a path or device), qcow2, or source (default for DVCR: raw, qcow2 and iso kept, vmdk and vdi become qcow2).',
      ),
    IMPORTER_TEMP_DIR: env.optionalString().describe('Scratch directory for DVCR imports (default: the OS temp dir); always cleaned up.'),
    IMPORTER_MAX_SIZE: env.int(0).describe('Refuse sources larger than this many bytes; 0 means no limit.'),
    IMPORTER_TERMINATION_LOG: env.string('/dev/termination-log').describe("Where the result JSON is written (the pod's terminationMessagePath)."),
    IMPORTER_PROGRESS_INTERVAL: env.duration('2s').describe('How often a progress line is logged.'),
    IMPORTER_METRICS_PORT: z.coerce
      .number()
      .int()
      .min(0)
      .max(65535)
      .optional()
      .describe('Serve /metrics (progress gauges) and /health/* on this port; unset: no server; 0 picks a free one.'),
    IMPORTER_METRICS_HOST: env.string('0.0.0.0').describe('Address the metrics server listens on.'),
    IMPORTER_HTTP_TIMEOUT: env.duration('60s').describe('Give up on a source or registry that does not connect or sends no data for this long.'),
    UPLOADER_HOST: env.string('0.0.0.0').describe('Address the upload endpoint listens on.'),
    UPLOADER_PORT: env.port(8444).describe('Port of the upload endpoint (PUT or POST /upload, GET /healthz); 0 picks a free one.'),
    UPLOADER_WAIT_TIMEOUT: env.duration('10m').describe('Fail with UploadTimeout when no upload has started for this long.'),
    LOG_LEVEL: env.logLevel().describe('Log level.'),
  })
  .superRefine(
    (c, ctx) => {
      if (!(SOURCES as readonly string[]).includes(c.IMPORTER_SOURCE)) return;
      if (c.IMPORTER_SOURCE !== 'upload' && c.IMPORTER_ENDPOINT === undefined) {
        ctx.addIssue({ code: 'custom', path: ['IMPORTER_ENDPOINT'], message: `is required for source ${c.IMPORTER_SOURCE}` });
      }
      if (c.IMPORTER_SOURCE === 'http' && c.IMPORTER_ENDPOINT !== undefined && !/^https?:\/\/[^/]/.test(c.IMPORTER_ENDPOINT)) {
        ctx.addIssue({ code: 'custom', path: ['IMPORTER_ENDPOINT'], message: 'must be an http:// or https:// URL' });
      }
      const destinations = [c.IMPORTER_DESTINATION_ENDPOINT, c.IMPORTER_DESTINATION_PATH, c.IMPORTER_DESTINATION_DEVICE].filter((d) => d !== undefined).length;
      if (destinations !== 1) {
        ctx.addIssue({
          code: 'custom',
          path: ['IMPORTER_DESTINATION_ENDPOINT'],
          message: 'exactly one of IMPORTER_DESTINATION_ENDPOINT, IMPORTER_DESTINATION_PATH and IMPORTER_DESTINATION_DEVICE must be set',
        });
      }
      // Checked even when a single key is invalid, so that every problem is reported together.
    },
    { when: () => true },
  );

export type ImporterConfig = Readonly<z.infer<typeof ImporterConfigSchema>>;

/** Parse the environment once into a frozen config; every problem is reported together. */
export function loadConfig(source: Readonly<Record<string, string | undefined>> = process.env): ImporterConfig {
  return parseConfig(ImporterConfigSchema, source);
}
