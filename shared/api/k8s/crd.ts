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
  /**
   * Backend (KubeVirt) resources: our schema types only the fields we read and write; the CRD keeps
   * spec and status open (x-kubernetes-preserve-unknown-fields).
   */
  permissive?: boolean;
}

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

/** The openAPIV3Schema of a resource: the zod schema, with the root fields the apiserver owns. */
export function openAPIV3Schema(def: ResourceDefinition): JsonSchema {
  const properties: Record<string, unknown> = { ...ROOT_FIELDS };
  if (def.permissive === true) {
    const shape = (def.schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
    for (const part of ['spec', 'status']) if (part in shape) properties[part] = { ...OPEN };
    return { type: 'object', description: def.description, properties };
  }
  const full = structuralSchema(def.schema);
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
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName(def), labels: { ...commonLabels, ...def.labels } },
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
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: openAPIV3Schema(def) },
          ...(Object.keys(subresources).length > 0 ? { subresources } : {}),
          additionalPrinterColumns: def.printerColumns.map((c) => ({ ...c })),
        },
      ],
    },
  };
}
