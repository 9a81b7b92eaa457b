/**
 * The restore of one object of a renamed kind (a GET of one VirtualMachine, or of its status) done on
 * the apiserver's JSON text instead of a parsed document: the text is scanned once, each name a rule
 * changes is replaced where it stands, and every other byte is passed on as it came (numbers keep
 * their digits, Go's escapes stay). The rules are those rewriteObject applies to such an object, type
 * meta and metadata (labels, annotations, finalizers, ownerReferences, managedFields), through the same
 * Renamer calls; the renamed kinds have no rules beyond their metadata. text.test.ts holds the two
 * paths to the same answer on generated objects. A rule added to rewriteMetadata (or to a renamed
 * kind in rewriteByKind) must be added here too, and the field it reads to the test's generator.
 *
 * Why (tests/bench/api-rewriter.bench.ts, GET of one VirtualMachine): parsing, restoring and serializing
 * it was about a sixth of the latency the proxy adds (p50 1.31x direct, 1.25x with the body passed on
 * unrestored); warm, this scan takes 9 µs where those took 15.
 *
 * Anything else (lists, other kinds, text that is not JSON: cut, a bad number, a missing comma) is left
 * to the parsed path: the function answers undefined. The scan checks JSON's structure everywhere but
 * inside strings, where it only finds their end: a raw control character or a bad escape in a string
 * it does not read is passed on as the apiserver sent it. A name written with JSON escapes is decoded
 * to be looked up, and written back without them when it is renamed.
 */
import { FIELD_SETS, groupVersion } from './objects.js';
import type { Renamer } from './names.js';

/** A span of the text to replace, in text order once sorted. */
interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** What typeRef found: the end of the object, and its type meta in the naming it had. */
interface TypeRef {
  readonly end: number;
  readonly apiVersion?: string;
  readonly kind?: string;
}

/** A string token: its bounds (quotes included) and its value when it holds no escape (else see `name`). */
interface Token {
  readonly start: number;
  readonly end: number;
  readonly value: string | undefined;
}

/** Thrown inside the scan for text it leaves to the parsed path. */
class NotHandled extends Error {}

/** A string JSON writes as it is between quotes (printable ASCII without `"` and `\`). */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

class Scanner {
  readonly edits: Edit[] = [];

  constructor(
    readonly s: string,
    readonly r: Renamer,
  ) {}

  ws(i: number): number {
    const s = this.s;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return i;
      i += 1;
    }
  }

  /** The string token starting at `i` (a quote). */
  string(i: number): Token {
    const end = this.stringEnd(i);
    return { start: i, end, value: this.backslashAfter(i) < end ? undefined : this.s.slice(i + 1, end - 1) };
  }

  /** The end of the string token starting at `i` (a quote), after its closing quote. */
  stringEnd(i: number): number {
    const s = this.s;
    if (s.charCodeAt(i) !== 34) throw new NotHandled();
    let from = i + 1;
    for (;;) {
      const q = s.indexOf('"', from);
      if (q === -1) throw new NotHandled();
      if (s.charCodeAt(q - 1) !== 92) return q + 1;
      let slashes = 1;
      while (s.charCodeAt(q - 1 - slashes) === 92) slashes += 1;
      if (slashes % 2 === 0) return q + 1;
      from = q + 1;
    }
  }

  /** Where the next backslash at or after `i` is (the text's length when none): one search per backslash. */
  private nextBackslash = -1;

  backslashAfter(i: number): number {
    if (this.nextBackslash < i) {
      const at = this.s.indexOf('\\', i);
      this.nextBackslash = at === -1 ? this.s.length : at;
    }
    return this.nextBackslash;
  }

  /**
   * The end of the value starting at `i`, checked to be JSON on the way (brackets, members, commas,
   * numbers and literals; inside strings only where they end), without taking anything out of it.
   */
  skip(i: number): number {
    const s = this.s;
    const c = s.charCodeAt(i);
    if (c === 34) return this.stringEnd(i);
    if (c === 123) {
      i = this.ws(i + 1);
      if (s.charCodeAt(i) === 125) return i + 1;
      for (;;) {
        i = this.ws(this.stringEnd(i));
        if (s.charCodeAt(i) !== 58) throw new NotHandled();
        i = this.ws(this.skip(this.ws(i + 1)));
        const d = s.charCodeAt(i);
        if (d === 125) return i + 1;
        if (d !== 44) throw new NotHandled();
        i = this.ws(i + 1);
      }
    }
    if (c === 91) {
      i = this.ws(i + 1);
      if (s.charCodeAt(i) === 93) return i + 1;
      for (;;) {
        i = this.ws(this.skip(i));
        const d = s.charCodeAt(i);
        if (d === 93) return i + 1;
        if (d !== 44) throw new NotHandled();
        i = this.ws(i + 1);
      }
    }
    if (c === 116 && s.startsWith('true', i)) return i + 4;
    if (c === 102 && s.startsWith('false', i)) return i + 5;
    if (c === 110 && s.startsWith('null', i)) return i + 4;
    return this.number(i);
  }

  /** The end of the number starting at `i` (JSON's grammar: no leading zeros, no bare dot). */
  number(i: number): number {
    const s = this.s;
    if (s.charCodeAt(i) === 45) i += 1;
    i = s.charCodeAt(i) === 48 ? i + 1 : this.digits(i);
    if (s.charCodeAt(i) === 46) i = this.digits(i + 1);
    const e = s.charCodeAt(i);
    if (e === 101 || e === 69) {
      i += 1;
      const sign = s.charCodeAt(i);
      if (sign === 43 || sign === 45) i += 1;
      i = this.digits(i);
    }
    return i;
  }

  /** The end of the digits (at least one) starting at `i`. */
  digits(i: number): number {
    const s = this.s;
    const from = i;
    while (isDigit(s.charCodeAt(i))) i += 1;
    if (i === from) throw new NotHandled();
    return i;
  }

  /** Calls `member` for each member of the object at `i` (which returns the end of the value); the end of the object. */
  object(i: number, member: (key: Token, valueStart: number) => number): number {
    const s = this.s;
    i = this.ws(i + 1);
    if (s.charCodeAt(i) === 125) return i + 1;
    for (;;) {
      const key = this.string(i);
      i = this.ws(key.end);
      if (s.charCodeAt(i) !== 58) throw new NotHandled();
      i = this.ws(member(key, this.ws(i + 1)));
      const c = s.charCodeAt(i);
      if (c === 125) return i + 1;
      if (c !== 44) throw new NotHandled();
      i = this.ws(i + 1);
    }
  }

  /** Calls `element` for each element of the array at `i`; the end of the array. */
  array(i: number, element: (start: number) => number): number {
    const s = this.s;
    i = this.ws(i + 1);
    if (s.charCodeAt(i) === 93) return i + 1;
    for (;;) {
      i = this.ws(element(i));
      const c = s.charCodeAt(i);
      if (c === 93) return i + 1;
      if (c !== 44) throw new NotHandled();
      i = this.ws(i + 1);
    }
  }

  isObject(i: number): boolean {
    return this.s.charCodeAt(i) === 123;
  }

  isArray(i: number): boolean {
    return this.s.charCodeAt(i) === 91;
  }

  isString(i: number): boolean {
    return this.s.charCodeAt(i) === 34;
  }

  /** The value of a key or string token (JSON escapes decoded). */
  name(t: Token): string {
    if (t.value !== undefined) return t.value;
    try {
      return JSON.parse(this.s.slice(t.start, t.end)) as string;
    } catch {
      throw new NotHandled();
    }
  }

  /** Write `to` over the token `t` (whose value is `from`) unless they are the same. */
  replace(t: Token, from: string, to: string): void {
    if (to !== from) this.edits.push({ start: t.start, end: t.end, text: PLAIN.test(to) ? `"${to}"` : JSON.stringify(to) });
  }

  /** A value that is an object: each member through `member`; anything else skipped. */
  objectOrSkip(i: number, member: (key: Token, valueStart: number) => number): number {
    return this.isObject(i) ? this.object(i, member) : this.skip(i);
  }

  /**
   * The keys of the object at `i` through `rename`, and its values through `value` (given the renamed
   * key) or skipped; anything but an object is skipped.
   */
  keys(i: number, rename: (key: string) => string, value?: (renamed: string, valueStart: number) => number): number {
    return this.objectOrSkip(i, (key, start) => {
      const k = this.name(key);
      const renamed = rename(k);
      this.replace(key, k, renamed);
      return value === undefined ? this.skip(start) : value(renamed, start);
    });
  }

  /**
   * `apiVersion` and `kind` of the object at `i` restored together (when both are strings; the last of
   * each, as JSON.parse keeps them); the other members through `member` or skipped.
   */
  typeRef(i: number, member?: (key: string, valueStart: number) => number | undefined): TypeRef {
    let apiVersion: Token | undefined;
    let kind: Token | undefined;
    const end = this.objectOrSkip(i, (key, start) => {
      const k = this.name(key);
      if ((k === 'apiVersion' || k === 'kind') && this.isString(start)) {
        const t = this.string(start);
        if (k === 'apiVersion') apiVersion = t;
        else kind = t;
        return t.end;
      }
      return member?.(k, start) ?? this.skip(start);
    });
    if (apiVersion === undefined || kind === undefined) return { end };
    const [a, k] = [this.name(apiVersion), this.name(kind)];
    const t = this.r.typeMeta(a, k, 'restore');
    this.replace(apiVersion, a, t.apiVersion);
    this.replace(kind, k, t.kind);
    return { end, apiVersion: a, kind: k };
  }

  /** A finalizer list: its strings renamed; anything else skipped. */
  finalizers(i: number): number {
    if (!this.isArray(i)) return this.skip(i);
    return this.array(i, (start) => {
      if (!this.isString(start)) return this.skip(start);
      const t = this.string(start);
      const f = this.name(t);
      this.replace(t, f, this.r.key('finalizers', f, 'restore'));
      return t.end;
    });
  }

  /** An object's metadata, as rewriteMetadata (objects.ts) restores it. */
  metadata(i: number): number {
    const r = this.r;
    return this.objectOrSkip(i, (key, start) => {
      switch (this.name(key)) {
        case 'labels':
          return this.keys(
            start,
            (k) => r.key('labels', k, 'restore'),
            (renamed, valueStart) => {
              if (!this.isString(valueStart)) return this.skip(valueStart);
              const t = this.string(valueStart);
              const v = this.name(t);
              this.replace(t, v, r.labelValue(renamed, v, 'restore'));
              return t.end;
            },
          );
        case 'annotations':
          return this.keys(start, (k) => r.key('annotations', k, 'restore'));
        case 'finalizers':
        case '$setElementOrder/finalizers':
        case '$deleteFromPrimitiveList/finalizers':
          return this.finalizers(start);
        case 'ownerReferences':
          return this.isArray(start) ? this.array(start, (ref) => this.typeRef(ref).end) : this.skip(start);
        case 'managedFields':
          return this.isArray(start) ? this.array(start, (entry) => this.managedFields(entry)) : this.skip(start);
        default:
          return this.skip(start);
      }
    });
  }

  /** One managedFields entry: its apiVersion's group, and the names in its `f:metadata` field sets. */
  managedFields(i: number): number {
    return this.objectOrSkip(i, (key, start) => {
      const k = this.name(key);
      if (k === 'apiVersion' && this.isString(start)) {
        const t = this.string(start);
        const v = this.name(t);
        this.replace(t, v, groupVersion(this.r, v, 'restore'));
        return t.end;
      }
      if (k !== 'fieldsV1') return this.skip(start);
      return this.objectOrSkip(start, (field, fieldStart) => {
        if (this.name(field) !== 'f:metadata') return this.skip(fieldStart);
        return this.objectOrSkip(fieldStart, (set, setStart) => {
          const kind = FIELD_SET_KINDS.get(this.name(set));
          return kind === undefined ? this.skip(setStart) : this.keys(setStart, (f) => this.r.fieldKey(kind, f, 'restore'));
        });
      });
    });
  }

  /** The text with the edits made. */
  result(): string {
    const edits = this.edits.sort((a, b) => a.start - b.start);
    let out = '';
    let at = 0;
    for (const e of edits) {
      out += this.s.slice(at, e.start) + e.text;
      at = e.end;
    }
    return out + this.s.slice(at);
  }
}

/** The field sets under `f:metadata` by key, and the kind of names they hold (objects.ts: FIELD_SETS). */
const FIELD_SET_KINDS = new Map<string, 'labels' | 'annotations' | 'finalizers'>(FIELD_SETS);

/**
 * `text` (the JSON of one object) restored, when it is an object of one of the renamed kinds (not a
 * list); undefined otherwise, and for text this scanner does not take (the caller parses it then).
 */
export function restoreObjectText(r: Renamer, text: string): string | undefined {
  const sc = new Scanner(text, r);
  try {
    const start = sc.ws(0);
    if (!sc.isObject(start)) return undefined;
    const top = sc.typeRef(start, (key, valueStart) => (key === 'metadata' ? sc.metadata(valueStart) : undefined));
    if (sc.ws(top.end) !== text.length) return undefined;
    return isRenamedKind(r, top) ? sc.result() : undefined;
  } catch (err: unknown) {
    // RangeError: nesting deeper than the stack (the parsed path has no such limit).
    if (err instanceof NotHandled || err instanceof RangeError) return undefined;
    throw err;
  }
}

/**
 * Whether the object is of a renamed kind in the stored naming (not its list kind): rewriteObject has
 * no rule for such an object beyond its type meta and metadata.
 */
function isRenamedKind(r: Renamer, { apiVersion, kind }: TypeRef): boolean {
  if (apiVersion === undefined || kind === undefined) return false;
  const slash = apiVersion.indexOf('/');
  if (slash === -1) return false;
  const m = r.matchKind(apiVersion.slice(0, slash), kind, 'restore');
  return m !== undefined && kind === r.rules.kindPrefix + m.resource.kind;
}
