/** The admission function's own configuration (the host adds PORT, TLS_CERT_FILE, TLS_KEY_FILE, ...). */
import { z } from 'zod';
import { env } from '../../shared/config/index.js';

export const admissionConfig = z.object({
  KUBECONFIG: env.optionalString().describe('Kubeconfig file for lookups; unset uses the pod service account (in-cluster)'),
  EDITION: z.enum(['CE', 'EE']).default('EE').describe('Module edition: CE turns off EE-only features (USB, migration node selectors, feature gates, ...)'),
  MODULE_NAMESPACE: env.string('d8-virtualization').describe("The module's namespace; its service accounts may write the module's reserved metadata keys"),
  DVCR_PVC_NAME: env.string('dvcr').describe('Name of the DVCR PersistentVolumeClaim in MODULE_NAMESPACE (its size and class are then fixed)'),
  CLUSTER_POD_SUBNET_CIDR: env.cidrList({ aligned: false }).describe('Pod subnets (comma-separated) that virtualMachineCIDRs must not overlap'),
  CLUSTER_SERVICE_SUBNET_CIDR: env.cidrList({ aligned: false }).describe('Service subnets (comma-separated) that virtualMachineCIDRs must not overlap'),
  LOOKUP_CACHE_TTL_MS: env.int(1000).describe('How long a looked-up object (class, leases, attachments, ...) is reused; 0 disables reuse'),
  LOOKUP_CACHE_STALE_MS: env
    .int(1000)
    .describe('After the TTL, a looked-up object is still used this long while one background read refreshes it; 0 waits for the read'),
  LOOKUP_CACHE_MAX_ENTRIES: env.int(2000, 1).describe('Most lookups kept in the cache; the oldest go first'),
  LOOKUP_TIMEOUT_MS: env.int(4000, 100).describe('Deadline of one apiserver read; keep it below the webhook timeoutSeconds'),
});

export type AdmissionConfig = z.infer<typeof admissionConfig>;
