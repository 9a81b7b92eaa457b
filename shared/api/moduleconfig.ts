/**
 * Settings of the `virtualization` ModuleConfig (deckhouse.io/v1alpha1, spec.settings), as the module's
 * config-values schema defines them. Unknown keys are rejected; only `dvcr` is required.
 */
import { z } from 'zod';
import { cronProblem } from '../cron/index.js';
import { isAlignedCIDR } from './ipv4.js';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN, quantity } from './k8s/schema.js';

const name = (what: string) => z.string().regex(DNS1123_LABEL).describe(what);

const storageClassSelector = z
  .strictObject({
    matchNames: z.array(z.string().min(1)).min(1).describe('StorageClass names that may be used.'),
  })
  .describe('StorageClasses users may choose.');

const DvcrSchema = z
  .strictObject({
    storage: z
      .strictObject({
        type: z.enum(['PersistentVolumeClaim']).describe('Storage of the registry; only PersistentVolumeClaim.'),
        persistentVolumeClaim: z
          .strictObject({
            storageClassName: z.string().optional().describe('StorageClass of the registry PVC; the default when empty.'),
            size: quantity().describe('Size of the registry PVC, e.g. 10Gi.'),
          })
          .describe('The registry PVC.'),
      })
      .describe('Where DVCR keeps images.'),
    gc: z
      .strictObject({
        schedule: z
          .string()
          .default('0 2 * * *')
          .check((ctx) => {
            const problem = cronProblem(ctx.value);
            if (problem !== undefined) ctx.issues.push({ code: 'custom', message: `invalid cron schedule: ${problem}`, input: ctx.value });
          })
          .describe('Cron schedule of garbage collection (five fields, UTC).'),
      })
      .optional()
      .describe('Garbage collection of unused images.'),
  })
  .describe('The in-cluster image registry (DVCR).');

/** Either empty (the default network) or `{type: SystemNetwork, systemNetwork: {name}}`. */
const LiveMigrationNetwork = z
  .strictObject({
    type: z.literal('SystemNetwork').optional().describe('Migrate over a SystemNetwork.'),
    systemNetwork: z
      .strictObject({ name: z.string().min(1).describe('Name of the SystemNetwork.') })
      .optional()
      .describe('The network for type SystemNetwork.'),
  })
  .check((ctx) => {
    const { type, systemNetwork } = ctx.value;
    if ((type === undefined) === (systemNetwork === undefined)) return;
    const missing = type === undefined ? 'type' : 'systemNetwork';
    ctx.issues.push({ code: 'custom', message: 'type and systemNetwork go together', input: ctx.value, path: [missing] });
  })
  .describe('The network live migration traffic uses.');

export const FEATURE_GATES = ['HotplugCPUWithLiveMigration', 'HotplugMemoryWithLiveMigration', 'HotplugCPUAndMemoryWithInPlaceResize', 'GPU'] as const;

export const VirtualizationSettingsSchema = z.strictObject({
  highAvailability: z.boolean().optional().describe('Run control-plane components with several replicas.'),
  virtualMachineCIDRs: z
    .array(z.string().refine(isAlignedCIDR, 'must be an IPv4 subnet aligned to its mask, e.g. 10.66.10.0/24'))
    .min(1)
    .optional()
    .describe('Subnets VM IP addresses are taken from; without them IP address management is off.'),
  ingressClass: z.string().regex(DNS1123_SUBDOMAIN).optional().describe('IngressClass of the upload endpoint.'),
  gatewayAPIGateway: z
    .strictObject({ name: name('Gateway name.'), namespace: name('Gateway namespace.') })
    .optional()
    .describe('Gateway API Gateway of the upload endpoint.'),
  https: z
    .strictObject({
      mode: z.enum(['Disabled', 'CertManager', 'CustomCertificate', 'OnlyInURI']).default('CertManager'),
      certManager: z.strictObject({ clusterIssuerName: z.string().default('letsencrypt').describe('ClusterIssuer to use.') }).optional(),
      customCertificate: z.strictObject({ secretName: z.string().optional().describe('Secret in d8-system with the certificate.') }).default({}),
    })
    .optional()
    .describe('TLS of the upload endpoint; overrides the global https settings.'),
  dvcr: DvcrSchema,
  audit: z.strictObject({ enabled: z.boolean().default(false).describe('Emit security audit events.') }).optional(),
  virtualImages: z
    .strictObject({
      storageClassName: z.string().optional().describe('Deprecated: use defaultStorageClassName.'),
      defaultStorageClassName: z.string().optional().describe('StorageClass of PVC-backed images by default.'),
      allowedStorageClassSelector: storageClassSelector.optional(),
    })
    .optional(),
  virtualDisks: z
    .strictObject({
      defaultStorageClassName: z.string().optional().describe('StorageClass of disks by default.'),
      allowedStorageClassSelector: storageClassSelector.optional(),
    })
    .optional(),
  liveMigration: z.strictObject({ network: LiveMigrationNetwork.optional() }).optional(),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).optional(),
  logFormat: z.enum(['text', 'json']).optional(),
  featureGates: z.array(z.enum(FEATURE_GATES)).optional(),
});
export type VirtualizationSettings = z.infer<typeof VirtualizationSettingsSchema>;

/** The ModuleConfig object named `virtualization`. */
export const VirtualizationModuleConfigSchema = z.looseObject({
  apiVersion: z.literal('deckhouse.io/v1alpha1'),
  kind: z.literal('ModuleConfig'),
  metadata: z.looseObject({ name: z.literal('virtualization') }),
  spec: z.looseObject({
    enabled: z.boolean().optional(),
    version: z.int().optional(),
    settings: VirtualizationSettingsSchema,
  }),
});
export type VirtualizationModuleConfig = z.infer<typeof VirtualizationModuleConfigSchema>;
