/** The API group and the root shape shared by every resource. */
import { z } from 'zod';
import { ConditionSchema, ObjectMetaSchema } from '../k8s/core.js';
import type { ResourceDefinition } from '../k8s/crd.js';
import { int64 } from '../k8s/schema.js';

export const GROUP = 'virtualization.deckhouse.io';
export const VERSION = 'v1alpha2';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Labels on every CRD of the module. */
export const CRD_LABELS = { heritage: 'deckhouse', module: 'virtualization' } as const;
/** Cluster-wide configuration that Deckhouse backs up. */
export const BACKUP_LABELS = { 'backup.deckhouse.io/cluster-config': 'true' } as const;

export type RootShape<K extends string, Sp extends z.ZodType, St extends z.ZodType> = {
  apiVersion: z.ZodLiteral<string>;
  kind: z.ZodLiteral<K>;
  metadata: typeof ObjectMetaSchema;
  spec: Sp;
  status: z.ZodOptional<St>;
};

/** The whole object: apiVersion, kind, metadata, a required spec and an optional status. */
export function rootSchema<K extends string, Sp extends z.ZodType, St extends z.ZodType>(
  apiVersion: string,
  kind: K,
  spec: Sp,
  status: St,
): z.ZodObject<RootShape<K, Sp, St>, z.core.$strict> {
  return z.strictObject({
    apiVersion: z.literal(apiVersion),
    kind: z.literal(kind),
    metadata: ObjectMetaSchema,
    spec,
    status: status.optional(),
  });
}

/** The conditions list of a status. */
export function conditions(): z.ZodOptional<z.ZodArray<typeof ConditionSchema>> {
  return z.array(ConditionSchema).optional().describe('The latest available observations of the resource state.');
}

/** status.observedGeneration. */
export function observedGeneration(): z.ZodOptional<z.ZodNumber> {
  return int64().optional().describe('The .metadata.generation the status was computed for.');
}

export type ResourceNames = Pick<
  ResourceDefinition,
  'group' | 'version' | 'kind' | 'plural' | 'singular' | 'scope' | 'shortNames' | 'categories' | 'statusSubresource'
>;

/**
 * Names of a public resource: singular is the lower-cased kind; the category is `virtualization`, or
 * `virtualization-cluster` for a cluster-wide resource unless given; every resource has /status.
 */
export function publicNames(
  kind: string,
  plural: string,
  scope: 'Namespaced' | 'Cluster',
  shortNames: readonly string[],
  categories: readonly string[] = [scope === 'Cluster' ? 'virtualization-cluster' : 'virtualization'],
): ResourceNames {
  return { group: GROUP, version: VERSION, kind, plural, singular: kind.toLowerCase(), scope, shortNames, categories, statusSubresource: true };
}
