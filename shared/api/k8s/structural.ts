/**
 * Turn the JSON Schema that zod emits into a structural OpenAPI v3 schema as apiextensions.k8s.io/v1
 * requires: every node typed, no $ref, no unions except the int-or-string form, no
 * `additionalProperties: false` (the apiserver prunes or rejects unknown fields itself).
 */
import { z } from 'zod';

export type JsonSchema = { [key: string]: unknown };

const SAFE_INT = Number.MAX_SAFE_INTEGER;
const DROPPED = ['$schema', 'propertyNames', 'id', '$id', 'title'];

/** The structural schema for a zod type (descriptions, defaults and CEL rules included). */
export function structuralSchema(schema: z.ZodType): JsonSchema {
  const raw = z.toJSONSchema(schema, { io: 'input', reused: 'inline', unrepresentable: 'throw', target: 'openapi-3.0' });
  return structural(raw, '');
}

function intOrString(node: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  if (node['description'] !== undefined) out['description'] = node['description'];
  if (node['default'] !== undefined) out['default'] = node['default'];
  out['anyOf'] = [{ type: 'integer' }, { type: 'string' }];
  if (node['pattern'] !== undefined) out['pattern'] = node['pattern'];
  out['x-kubernetes-int-or-string'] = true;
  if (node['x-kubernetes-validations'] !== undefined) out['x-kubernetes-validations'] = node['x-kubernetes-validations'];
  return out;
}

/** Drop the bounds zod adds for safe integers; int32 fields keep theirs instead of the format. */
function tidyInteger(node: JsonSchema): void {
  if (node['maximum'] === SAFE_INT) delete node['maximum'];
  if (node['minimum'] === -SAFE_INT) delete node['minimum'];
  // `format: int32` makes the apiserver report an out-of-range value at the path `<nil>`; its own
  // bounds (minimum/maximum, kept from int32()) report the same values at the field instead.
  if (node['format'] === 'int32') delete node['format'];
}

/** Keys in a fixed, readable order: what the field is first, nested schemas last. */
const ORDER = ['description', 'type', 'format', 'enum', 'default', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems'];
const LAST = ['properties', 'required', 'additionalProperties', 'items'];

function ordered(node: JsonSchema): JsonSchema {
  const rank = (k: string): number => {
    const i = ORDER.indexOf(k);
    if (i >= 0) return i;
    const j = LAST.indexOf(k);
    return j >= 0 ? 100 + j : k.startsWith('x-kubernetes') ? 200 : 50;
  };
  return Object.fromEntries(Object.entries(node).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)));
}

function structural(input: JsonSchema, path: string): JsonSchema {
  if (input['x-kubernetes-int-or-string'] === true) return ordered(intOrString(input));
  const node: JsonSchema = { ...input };
  for (const k of DROPPED) delete node[k];
  if (node['anyOf'] !== undefined || node['oneOf'] !== undefined || node['allOf'] !== undefined || node['$ref'] !== undefined) {
    throw new Error(`${path || '<root>'}: unions and references cannot be expressed in a structural schema`);
  }
  if (node['x-kubernetes-preserve-unknown-fields'] === true) {
    node['type'] = 'object';
    delete node['additionalProperties'];
  }
  const extra = node['additionalProperties'];
  if (extra === false) delete node['additionalProperties'];
  else if (extra !== null && typeof extra === 'object' && Object.keys(extra).length === 0) {
    // z.looseObject: known fields typed, anything else kept.
    delete node['additionalProperties'];
    node['x-kubernetes-preserve-unknown-fields'] = true;
  } else if (extra !== undefined) {
    node['additionalProperties'] = structural(extra as JsonSchema, `${path}[*]`);
  }
  const props = node['properties'] as Record<string, JsonSchema> | undefined;
  if (props !== undefined) {
    if (Object.keys(props).length === 0) delete node['properties'];
    else node['properties'] = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, structural(v, `${path}.${k}`)]));
  }
  if (node['items'] !== undefined) node['items'] = structural(node['items'] as JsonSchema, `${path}[]`);
  if (node['type'] === 'integer') tidyInteger(node);
  if (typeof node['type'] !== 'string') throw new Error(`${path || '<root>'}: every node of a structural schema needs a type`);
  return ordered(node);
}
