/**
 * Building blocks for resource schemas: zod types that carry the Kubernetes OpenAPI details (formats,
 * int-or-string, preserve-unknown-fields, list types, CEL rules) as metadata, so one schema both
 * validates objects in TypeScript and generates the structural CRD schema.
 */
import { z } from 'zod';

/**
 * A Kubernetes resource quantity ("10Gi", "500m", 3), in the text of the pattern controller-gen emits
 * for resource.Quantity (the original's CRDs carry the same string).
 */
export const QUANTITY_PATTERN = new RegExp(
  String.raw`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`,
);
/** A DNS-1123 label: lower-case alphanumerics and '-', at most 63 characters. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A DNS-1123 subdomain: dot-separated labels, at most 253 characters. */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** A 32-bit integer (`format: int32`). */
export function int32(): z.ZodNumber {
  return z.int().min(INT32_MIN).max(INT32_MAX).meta({ format: 'int32' });
}

/** A 64-bit integer (`format: int64`; JavaScript keeps it exact up to 2^53). */
export function int64(): z.ZodNumber {
  return z.int().meta({ format: 'int64' });
}

/** A quantity: integer or string in Kubernetes quantity syntax (`x-kubernetes-int-or-string`). */
export function quantity(): z.ZodUnion<readonly [z.ZodInt, z.ZodString]> {
  return z
    .union([z.int(), z.string().regex(QUANTITY_PATTERN, 'must be a Kubernetes quantity such as "10Gi"')])
    .meta({ 'x-kubernetes-int-or-string': true, pattern: QUANTITY_PATTERN.source });
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 timestamp (`format: date-time`), as metav1.Time serializes. */
export function dateTime(): z.ZodString {
  return z
    .string()
    .refine((s) => RFC3339.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))), 'must be an RFC 3339 date-time')
    .meta({ format: 'date-time' });
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Base64-encoded bytes (`format: byte`). */
export function base64Bytes(): z.ZodString {
  return z
    .string()
    .refine((s) => BASE64.test(s), 'must be base64-encoded')
    .meta({ format: 'byte' });
}

/** An object whose content is not described (`x-kubernetes-preserve-unknown-fields`). */
export function freeform(): z.ZodRecord<z.ZodString, z.ZodUnknown> {
  return z.record(z.string(), z.unknown()).meta({ 'x-kubernetes-preserve-unknown-fields': true });
}

/** A string-to-string map (labels, annotations, node selectors). */
export function stringMap(): z.ZodRecord<z.ZodString, z.ZodString> {
  return z.record(z.string(), z.string());
}

/**
 * A list whose items are identified by `keys` (`x-kubernetes-list-type: map`): the apiserver rejects
 * two items with the same keys, and so does the schema (the problem is reported at the list, as
 * server-side apply does).
 */
export function listMap<T extends z.ZodType>(item: T, keys: readonly string[]): z.ZodArray<T> {
  const key = (value: unknown): string => JSON.stringify(keys.map((k) => (value as Record<string, unknown> | null)?.[k]));
  return z
    .array(item)
    .check((ctx) => {
      const seen = new Set<string>();
      ctx.value.forEach((value, i) => {
        const k = key(value);
        if (seen.has(k)) ctx.issues.push({ code: 'custom', message: `duplicate entries for key ${k} (item ${i})`, input: value });
        seen.add(k);
      });
    })
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': [...keys] });
}

/** How the apiserver classifies a failed CEL rule (`reason` of x-kubernetes-validations). */
export type CelReason = 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';

/**
 * A CEL validation rule with its TypeScript twin. `rule` runs in the apiserver (`self` is the value the
 * rule is attached to, defaults already applied); `holds` is the same predicate for the zod schema. A
 * transition rule (using `oldSelf`) has `holds: 'transition'`: it constrains updates, which a schema
 * check of a single object cannot see.
 */
export interface CelRule<T> {
  rule: string;
  message: string;
  /** Where the error points, relative to the value (`.bootloader`, `.cores.max`). */
  fieldPath?: string;
  reason?: CelReason;
  holds: ((self: T) => boolean) | 'transition';
}

/** The JSON form of a rule in `x-kubernetes-validations`. */
export interface CelValidation {
  rule: string;
  message: string;
  fieldPath?: string;
  reason?: CelReason;
}

/** `.a.b` -> ['a', 'b'] (only dotted field names are used in our rules). */
export function fieldPathSegments(fieldPath: string | undefined): string[] {
  if (fieldPath === undefined || fieldPath === '') return [];
  if (!/^(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(fieldPath)) throw new Error(`unsupported CEL fieldPath ${fieldPath}`);
  return fieldPath.slice(1).split('.');
}

/** Attach CEL rules to a schema: the CRD gets them as x-kubernetes-validations, zod checks `holds`. */
export function withRules<S extends z.ZodType>(schema: S, rules: readonly CelRule<z.output<S>>[]): S {
  const previous = (schema.meta()?.['x-kubernetes-validations'] as CelValidation[] | undefined) ?? [];
  const validations: CelValidation[] = rules.map(({ rule, message, fieldPath, reason }) => ({
    rule,
    message,
    ...(fieldPath !== undefined ? { fieldPath } : {}),
    ...(reason !== undefined ? { reason } : {}),
  }));
  const checked = schema.check((ctx) => {
    for (const r of rules) {
      if (r.holds === 'transition' || r.holds(ctx.value)) continue;
      ctx.issues.push({ code: 'custom', message: r.message, input: ctx.value, path: fieldPathSegments(r.fieldPath) });
    }
  });
  return checked.meta({ 'x-kubernetes-validations': [...previous, ...validations] });
}

/** A rule that forbids changing the value once set (`self == oldSelf`). */
export function immutable<T>(message: string): CelRule<T> {
  return { rule: 'self == oldSelf', message, holds: 'transition' };
}

/** CEL `has(self.x)` in TypeScript: the field is present. */
export function has(value: object | undefined, field: string): boolean {
  return value !== undefined && (value as Record<string, unknown>)[field] !== undefined;
}

/**
 * The "one sub-object per type" rule of a discriminated object: `field` is set exactly when
 * `self.type` is `type` (or, when `optional`, only then).
 */
export function fieldForType<T extends { type: string }>(field: string, type: string, optional = false): CelRule<T> {
  if (optional) {
    return {
      rule: `!has(self.${field}) || self.type == '${type}'`,
      message: `${field} is allowed only when type is ${type}`,
      fieldPath: `.${field}`,
      reason: 'FieldValueForbidden',
      holds: (self) => !has(self, field) || self.type === type,
    };
  }
  return {
    rule: `has(self.${field}) == (self.type == '${type}')`,
    message: `${field} is required when type is ${type} and forbidden otherwise`,
    fieldPath: `.${field}`,
    holds: (self) => has(self, field) === (self.type === type),
  };
}
