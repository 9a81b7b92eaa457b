/**
 * Resource definitions (names, scope, printer columns, subresources, schema) and their
 * CustomResourceDefinition (apiextensions.k8s.io/v1).
 */
import type { z } from 'zod';
import { structuralSchema, type JsonSchema } from './structural.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  /** 1 = only shown with `-o wide`. */
  priority?: number;
  format?: string;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** Another served version of a resource (its own schema; printer columns and subresources are shared). */
export interface OtherVersion {
  name: string;
  schema: z.ZodType;
}

/**
 * Conversion between versions by a webhook on a Service of the module namespace (`ConversionReview`
 * v1, port 443). As in the original, the CRD file declares no conversion: it carries the label and
 * annotations for the certificate manager, which sets `strategy: Webhook` with the Service (once the
 * Service exists) and injects the CA from `caFromSecret`.
 */
export interface ConversionWebhook {
  service: string;
  path: string;
  caFromSecret: string;
}

export interface ResourceDefinition<S extends z.ZodType = z.ZodType> {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  scope: 'Namespaced' | 'Cluster';
  shortNames?: readonly string[];
  categories?: readonly string[];
  /** Shown by `kubectl explain <kind>`. */
  description: string;
  /** The whole object: apiVersion, kind, metadata, spec and/or status. */
  schema: S;
  printerColumns: readonly PrinterColumn[];
  /** The /status subresource (status written separately from spec). */
  statusSubresource: boolean;
  scale?: ScaleSubresource;
  /** Extra labels on the CustomResourceDefinition object. */
  labels?: Readonly<Record<string, string>>;
  /** Versions served besides `version` (VirtualMachineClass v1alpha3). */
  otherVersions?: readonly OtherVersion[];
  /** The version stored in etcd; `version` unless given. */
  storageVersion?: string;
  /** `version` is deprecated: the apiserver sends this warning with every request at it. */
  deprecationWarning?: string;
  /** How the apiserver converts between the versions (with otherVersions). */
  conversion?: ConversionWebhook;
  /**
   * Backend (KubeVirt) resources: our schema types only the fields we read and write; the CRD keeps
   * spec and status open (x-kubernetes-preserve-unknown-fields).
   */
  permissive?: boolean;
}

/** The certificate manager fills the CA bundle of objects with this label (daemons/controller/certificates). */
export const INJECT_CA_LABEL = 'virtualization.deckhouse.io/inject-ca';
/** The Secret (in the module namespace) whose `ca.crt` is injected. */
export const INJECT_CA_FROM_ANNOTATION = 'virtualization.deckhouse.io/inject-ca-from';
/** On a CRD: `<service><path>` of its conversion webhook in the module namespace (`admission-webhook/convert`). */
export const CONVERSION_WEBHOOK_ANNOTATION = 'virtualization.deckhouse.io/conversion-webhook';

export const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** A printer column showing the status of one condition. */
export function conditionColumn(name: string, type: string, priority?: number): PrinterColumn {
  return {
    name,
    type: 'string',
    jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
    ...(priority !== undefined ? { priority } : {}),
  };
}

const OPEN: JsonSchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

const ROOT_FIELDS: JsonSchema = {
  apiVersion: {
    type: 'string',
    description: 'The versioned schema of this representation of an object (group/version).',
  },
  kind: { type: 'string', description: 'The REST resource this object represents, in CamelCase.' },
  metadata: { type: 'object' },
};

/** The openAPIV3Schema of a resource (of one of its other versions when `schema` is given). */
export function openAPIV3Schema(def: ResourceDefinition, schema: z.ZodType = def.schema): JsonSchema {
  const properties: Record<string, unknown> = { ...ROOT_FIELDS };
  if (def.permissive === true) {
    const shape = (def.schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
    for (const part of ['spec', 'status']) if (part in shape) properties[part] = { ...OPEN };
    return { type: 'object', description: def.description, properties };
  }
  const full = structuralSchema(schema);
  const props = (full['properties'] ?? {}) as Record<string, JsonSchema>;
  for (const part of ['spec', 'status']) if (props[part] !== undefined) properties[part] = props[part];
  const required = ((full['required'] ?? []) as string[]).filter((r) => r === 'spec' || r === 'status');
  return {
    type: 'object',
    description: def.description,
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
}

export function crdName(def: Pick<ResourceDefinition, 'plural' | 'group'>): string {
  return `${def.plural}.${def.group}`;
}

/** The CustomResourceDefinition object for a resource definition. */
export function toCRD(def: ResourceDefinition, commonLabels: Readonly<Record<string, string>>): JsonSchema {
  const subresources: JsonSchema = {};
  if (def.statusSubresource) subresources['status'] = {};
  if (def.scale !== undefined) subresources['scale'] = { ...def.scale };
  const storage = def.storageVersion ?? def.version;
  const version = (name: string, schema: z.ZodType, deprecationWarning?: string): JsonSchema => ({
    name,
    served: true,
    storage: name === storage,
    ...(deprecationWarning !== undefined ? { deprecated: true, deprecationWarning } : {}),
    schema: { openAPIV3Schema: openAPIV3Schema(def, schema) },
    ...(Object.keys(subresources).length > 0 ? { subresources } : {}),
    additionalPrinterColumns: def.printerColumns.map((c) => ({ ...c })),
  });
  const conversion = def.conversion;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: crdName(def),
      labels: { ...commonLabels, ...def.labels, ...(conversion !== undefined ? { [INJECT_CA_LABEL]: 'true' } : {}) },
      ...(conversion !== undefined
        ? {
            annotations: {
              [INJECT_CA_FROM_ANNOTATION]: conversion.caFromSecret,
              [CONVERSION_WEBHOOK_ANNOTATION]: `${conversion.service}${conversion.path}`,
            },
          }
        : {}),
    },
    spec: {
      group: def.group,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        ...(def.shortNames?.length ? { shortNames: [...def.shortNames] } : {}),
        ...(def.categories?.length ? { categories: [...def.categories] } : {}),
      },
      scope: def.scope,
      versions: [version(def.version, def.schema, def.deprecationWarning), ...(def.otherVersions ?? []).map((v) => version(v.name, v.schema))],
    },
  };
}
