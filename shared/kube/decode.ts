import type { ZodType, core } from 'zod';
import { formatPath } from '../config/index.js';
import { InvalidObjectError } from './errors.js';

/** What decoding one object read from the apiserver gave. */
export type Decoded<T> =
  | {
      readonly ok: true;
      /** The parsed object (defaults applied) with every field of the input the schema does not know. */
      readonly value: T;
      /** Paths of fields a strict schema rejected as unknown and that were kept anyway (`spec.newField`). */
      readonly unknownFields: readonly string[];
    }
  | { readonly ok: false; readonly error: InvalidObjectError };

/** Unknown keys can sit at every nesting level; each round removes the ones zod reported. */
const MAX_ROUNDS = 8;

/**
 * Decode an object the apiserver stored, tolerating a newer API: fields the schema does not know are
 * not an error (a CRD upgrade may add them before this code knows them) and are kept in the result,
 * so a read-modify-write never drops them. Anything else the schema rejects (a wrong type, a missing
 * required field, an unknown enum value) is an InvalidObjectError naming the object and each field.
 * `name` names the object in the error (`Widget ns/a`).
 */
export function decodeObject<T>(schema: ZodType<T>, raw: unknown, name: () => string): Decoded<T> {
  let input = raw;
  const unknownFields: string[] = [];
  for (let round = 0; ; round++) {
    const result = schema.safeParse(input);
    if (result.success) return { ok: true, value: graft(result.data, raw), unknownFields };
    const unknown = result.error.issues.filter((i): i is core.$ZodIssueUnrecognizedKeys => i.code === 'unrecognized_keys');
    if (unknown.length === 0 || round === MAX_ROUNDS) {
      const problems = result.error.issues.filter((i) => i.code !== 'unrecognized_keys').map((i) => ({ path: formatPath(i.path), message: i.message }));
      return { ok: false, error: new InvalidObjectError(name(), problems.length > 0 ? problems : [{ path: '', message: 'does not match its schema' }]) };
    }
    if (input === raw) input = structuredClone(raw);
    for (const issue of unknown) {
      const parent = at(input, issue.path);
      for (const key of issue.keys) {
        delete parent?.[key];
        unknownFields.push(formatPath([...issue.path, key]));
      }
    }
  }
}

type Rec = Record<string, unknown>;

function isRecord(value: unknown): value is Rec {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function at(root: unknown, path: readonly PropertyKey[]): Rec | undefined {
  let node: unknown = root;
  for (const seg of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[seg];
  }
  return isRecord(node) ? node : undefined;
}

/**
 * Put back into the parsed value every field of the input it lacks (schemas that strip unknown keys,
 * or keys removed above), descending into objects present in both and arrays of equal length.
 * The parsed value is zod's fresh copy, so it is changed in place.
 */
function graft<V>(parsed: V, raw: unknown): V {
  graftInto(parsed, raw);
  return parsed;
}

function graftInto(parsed: unknown, raw: unknown): void {
  if (parsed === raw) return;
  if (isRecord(parsed) && isRecord(raw)) {
    for (const [key, value] of Object.entries(raw)) {
      if (!(key in parsed)) parsed[key] = value;
      else graftInto(parsed[key], value);
    }
  } else if (Array.isArray(parsed) && Array.isArray(raw) && parsed.length === raw.length) {
    parsed.forEach((item, i) => graftInto(item, raw[i]));
  }
}
