import { z } from 'zod';
import { internalCDI, internalKubeVirt } from '../../shared/api/internal/resources.js';
import { senderAuthConfigShape } from '../../shared/authz/index.js';
import { env } from '../../shared/config/index.js';

/** One object to delete, in the original's RESOURCES shape (GVR keys in any letter case). */
export interface Target {
  readonly gvr: { readonly group: string; readonly version: string; readonly resource: string };
  readonly name: string;
  /** Unset for cluster-scoped resources. */
  readonly namespace?: string | undefined;
}

/** What the original pre-delete hook removes: the internal KubeVirt and CDI configuration. */
export const DEFAULT_TARGETS: readonly Target[] = [
  {
    gvr: { group: internalKubeVirt.group, version: internalKubeVirt.version, resource: internalKubeVirt.plural },
    namespace: 'd8-virtualization',
    name: 'config',
  },
  { gvr: { group: internalCDI.group, version: internalCDI.version, resource: internalCDI.plural }, name: 'config' },
];

const lowerKeys = (value: unknown): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toLowerCase(), lowerKeys(v)]))
    : value;

const targetSchema = z.preprocess(
  lowerKeys,
  z.strictObject({
    gvr: z.strictObject({ group: z.string(), version: z.string().min(1), resource: z.string().min(1) }),
    name: z.string().min(1),
    namespace: z.string().min(1).optional(),
  }),
);

const targets = z
  .string()
  .transform((text, ctx): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array of {"gvr": {"group", "version", "resource"}, "name", "namespace"?}' });
      return z.NEVER;
    }
  })
  .pipe(z.array(targetSchema).min(1))
  .default(DEFAULT_TARGETS as Target[]);

/** Configuration of the function and of the Job entry; every key from the environment. */
export const preDeleteConfig = z.object({
  RESOURCES: targets.describe('JSON array of the objects to delete and wait for; the KubeVirt and CDI `config` objects by default'),
  WAIT_TIMEOUT: env.duration('300s').describe('Deadline for all objects to be gone, finalizers included; missing it is a failure'),
  POLL_INTERVAL: env.duration('2s').describe('Pause between checks whether a deleted object is gone (and between retries of failed calls)'),
  MODULE_CONFIG_NAME: env.string('virtualization').describe('The ModuleConfig whose deletion or disabling triggers the clean-up'),
  KUBECONFIG: env.optionalString().describe('Kubeconfig file; the pod service account when unset'),
  // Who may send the function events: `create predeleteevents.virtualization.deckhouse.io` (shared/authz/senders.ts); the Job ignores these keys.
  ...senderAuthConfigShape,
});

export type PreDeleteConfig = z.infer<typeof preDeleteConfig>;
