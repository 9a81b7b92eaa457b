/**
 * `Renamer`: the rules indexed for both directions. `rename` turns original names (`kubevirt.io`) into
 * the stored ones (`internal.virtualization.deckhouse.io`); `restore` turns them back. Every function
 * returns its input unchanged when no rule matches (unknown names pass through).
 */
import type { GroupRule, KeyRules, ResourceRule, RewriteRules } from './rules.js';

export type Direction = 'rename' | 'restore';

export interface ResourceMatch {
  readonly group: GroupRule;
  readonly resource: ResourceRule;
}

/** Key maps (labels, annotations, finalizers) in one direction. */
interface KeyIndex {
  readonly names: ReadonlyMap<string, string>;
  readonly prefixes: ReadonlyMap<string, string>;
}

function keyIndex(rules: KeyRules, reverse: boolean): KeyIndex {
  const flip = (record: Readonly<Record<string, string>>): Map<string, string> => new Map(Object.entries(record).map(([a, b]) => (reverse ? [b, a] : [a, b])));
  return { names: flip(rules.names), prefixes: flip(rules.prefixes) };
}

function mapKey(key: string, index: KeyIndex): string | undefined {
  const exact = index.names.get(key);
  if (exact !== undefined) return exact;
  const slash = key.indexOf('/');
  const prefix = index.prefixes.get(slash === -1 ? key : key.slice(0, slash));
  if (prefix === undefined) return undefined;
  return slash === -1 ? prefix : prefix + key.slice(slash);
}

/**
 * How many distinct names each memo of `key` and `fieldKey` keeps (per kind and direction). The same
 * few label, annotation and finalizer names come back on every object; a memo that fills up (names
 * are user data) starts over, so twelve memos hold at most a few MB whatever the objects carry.
 */
export const MEMO_SIZE = 1_024;

type KeyKind = 'labels' | 'annotations' | 'finalizers';

/** One memo per key kind and direction. */
type Memos = Record<KeyKind, Record<Direction, Map<string, string>>>;

function memos(): Memos {
  const both = (): Record<Direction, Map<string, string>> => ({ rename: new Map(), restore: new Map() });
  return { labels: both(), annotations: both(), finalizers: both() };
}

function remember(memo: Map<string, string>, from: string, to: string): string {
  if (memo.size >= MEMO_SIZE) memo.clear();
  memo.set(from, to);
  return to;
}

export class Renamer {
  private readonly groupTo = new Map<string, GroupRule>();
  private readonly renamedGroupTo = new Map<string, GroupRule>();
  private readonly byPlural = new Map<string, ResourceMatch>();
  private readonly byRenamedPlural = new Map<string, ResourceMatch>();
  private readonly byKind = new Map<string, ResourceMatch>();
  private readonly byRenamedKind = new Map<string, ResourceMatch>();
  private readonly keys: Record<KeyKind, Record<Direction, KeyIndex>>;
  private readonly keyMemo = memos();
  private readonly fieldKeyMemo = memos();
  /**
   * Substrings one of which every document that a rule changes (in either direction) contains: a body
   * without any of them passes through without being parsed.
   */
  readonly markers: readonly string[];

  constructor(readonly rules: RewriteRules) {
    for (const g of rules.groups) {
      this.groupTo.set(g.group, g);
      this.renamedGroupTo.set(g.renamed, g);
      for (const r of g.resources) {
        const m = { group: g, resource: r };
        this.byPlural.set(`${g.group}/${r.plural}`, m);
        this.byRenamedPlural.set(`${g.renamed}/${this.resource(r.plural)}`, m);
        this.byKind.set(`${g.group}/${r.kind}`, m);
        this.byKind.set(`${g.group}/${r.listKind}`, m);
        this.byRenamedKind.set(`${g.renamed}/${rules.kindPrefix}${r.kind}`, m);
        this.byRenamedKind.set(`${g.renamed}/${rules.kindPrefix}${r.listKind}`, m);
      }
    }
    const both = (k: KeyRules): Record<Direction, KeyIndex> => ({ rename: keyIndex(k, false), restore: keyIndex(k, true) });
    this.keys = { labels: both(rules.labels), annotations: both(rules.annotations), finalizers: both(rules.finalizers) };
    const renamedKeys = [rules.labels, rules.annotations, rules.finalizers].flatMap((k) => [...Object.values(k.names), ...Object.values(k.prefixes)]);
    const originalKeys = [rules.labels, rules.annotations, rules.finalizers].flatMap((k) => [...Object.keys(k.names), ...Object.keys(k.prefixes)]);
    this.markers = minimalMarkers([
      ...rules.groups.flatMap((g) => [g.renamed, g.group]),
      ...[...renamedKeys, ...originalKeys].map((k) => k.split('/')[0] ?? k),
      ...rules.labelValues.flatMap((v) => [v.renamed, v.value]),
      rules.preservedPrefix,
      rules.resourcePrefix,
      rules.kindPrefix,
    ]);
  }

  // Groups and resources.

  /** The rule of an original group (`kubevirt.io`). */
  groupRule(group: string): GroupRule | undefined {
    return this.groupTo.get(group);
  }

  /** The rule of a renamed group (`internal.virtualization.deckhouse.io`). */
  renamedGroupRule(group: string): GroupRule | undefined {
    return this.renamedGroupTo.get(group);
  }

  group(group: string, dir: Direction): string {
    return (dir === 'rename' ? this.groupTo.get(group)?.renamed : this.renamedGroupTo.get(group)?.group) ?? group;
  }

  /** The match of a resource (plural) in a group, in the naming of `dir`'s source side. */
  match(group: string, plural: string, dir: Direction): ResourceMatch | undefined {
    return (dir === 'rename' ? this.byPlural : this.byRenamedPlural).get(`${group}/${plural}`);
  }

  /** The match of a kind or list kind in a group, in the naming of `dir`'s source side. */
  matchKind(group: string, kind: string, dir: Direction): ResourceMatch | undefined {
    return (dir === 'rename' ? this.byKind : this.byRenamedKind).get(`${group}/${kind}`);
  }

  /** The stored plural of an original plural. */
  resource(plural: string): string {
    return this.rules.resourcePrefix + plural;
  }

  /** A plural (or `plural/subresource`) of `group` (source naming of `dir`) in the other naming. */
  resourceName(group: string, name: string, dir: Direction): string {
    const slash = name.indexOf('/');
    const plural = slash === -1 ? name : name.slice(0, slash);
    const m = this.match(group, plural, dir);
    if (m === undefined) return name;
    const mapped = dir === 'rename' ? this.resource(m.resource.plural) : m.resource.plural;
    return slash === -1 ? mapped : mapped + name.slice(slash);
  }

  /** `apiVersion` + `kind` in the other naming; unknown pairs unchanged. */
  typeMeta(apiVersion: string, kind: string, dir: Direction): { apiVersion: string; kind: string } {
    const slash = apiVersion.indexOf('/');
    if (slash === -1) return { apiVersion, kind };
    const group = apiVersion.slice(0, slash);
    const m = this.matchKind(group, kind, dir);
    if (m === undefined) return { apiVersion, kind };
    const version = apiVersion.slice(slash);
    return dir === 'rename'
      ? { apiVersion: m.group.renamed + version, kind: this.rules.kindPrefix + kind }
      : { apiVersion: m.group.group + version, kind: kind.slice(this.rules.kindPrefix.length) };
  }

  /** A kind given its group (no version), e.g. for AdmissionReview `kind` and PVC data sources. */
  kind(group: string, kind: string, dir: Direction): string {
    const m = this.matchKind(group, kind, dir);
    if (m === undefined) return kind;
    return dir === 'rename' ? this.rules.kindPrefix + kind : kind.slice(this.rules.kindPrefix.length);
  }

  /** A CRD name `<plural>.<group>` in the other naming. */
  crdName(name: string, dir: Direction): string {
    const dot = name.indexOf('.');
    if (dot === -1) return name;
    const plural = name.slice(0, dot);
    const group = name.slice(dot + 1);
    const m = this.match(group, plural, dir);
    if (m === undefined) return name;
    return dir === 'rename' ? `${this.resource(m.resource.plural)}.${m.group.renamed}` : `${m.resource.plural}.${m.group.group}`;
  }

  shortName(name: string, dir: Direction): string {
    const p = this.rules.shortNamePrefix;
    if (dir === 'rename') return p + name;
    return name.startsWith(p) ? name.slice(p.length) : name;
  }

  // Labels, annotations, finalizers.

  /**
   * A label, annotation or finalizer name in the other naming. A name already in original form on the
   * server is shown as `preserved-original-<name>` when restoring, and that prefix is stripped when
   * renaming, so both forms survive a round trip.
   */
  key(kind: KeyKind, key: string, dir: Direction): string {
    const memo = this.keyMemo[kind][dir];
    return memo.get(key) ?? remember(memo, key, this.mapKey(kind, key, dir));
  }

  private mapKey(kind: KeyKind, key: string, dir: Direction): string {
    const preserved = this.rules.preservedPrefix;
    if (dir === 'rename') {
      if (key.startsWith(preserved)) return key.slice(preserved.length);
      return mapKey(key, this.keys[kind].rename) ?? key;
    }
    const restored = mapKey(key, this.keys[kind].restore);
    if (restored !== undefined) return restored;
    return mapKey(key, this.keys[kind].rename) !== undefined ? preserved + key : key;
  }

  /**
   * A key of a managedFields field set under `f:labels`, `f:annotations` (`f:<name>`) or
   * `f:finalizers` (`v:"<name>"`, the name as a JSON string) in the other naming, so that server-side
   * apply owners follow the renamed names; any other key unchanged.
   */
  fieldKey(kind: KeyKind, key: string, dir: Direction): string {
    const memo = this.fieldKeyMemo[kind][dir];
    return memo.get(key) ?? remember(memo, key, this.mapFieldKey(kind, key, dir));
  }

  private mapFieldKey(kind: KeyKind, key: string, dir: Direction): string {
    if (kind !== 'finalizers') return key.startsWith('f:') ? `f:${this.key(kind, key.slice(2), dir)}` : key;
    if (!key.startsWith('v:')) return key;
    try {
      const value: unknown = JSON.parse(key.slice(2));
      return typeof value === 'string' ? `v:${JSON.stringify(this.key('finalizers', value, dir))}` : key;
    } catch {
      return key;
    }
  }

  /** A label value in the other naming (only a few keys have renamed values). */
  labelValue(originalKey: string, value: string, dir: Direction): string {
    for (const v of this.rules.labelValues) {
      if (v.key !== originalKey) continue;
      if (dir === 'rename' && v.value === value) return v.renamed;
      if (dir === 'restore' && v.renamed === value) return v.value;
    }
    return value;
  }

  /** A label map (labels, selectors, nodeSelector) in the other naming. */
  labelMap(labels: unknown, dir: Direction): unknown {
    return mapRecord(
      labels,
      (k) => this.key('labels', k, dir),
      // A label value's rule is keyed by the label's original name: the key before renaming, after restoring.
      (k, nk, v) => (typeof v === 'string' ? this.labelValue(dir === 'rename' ? k : nk, v, dir) : v),
    );
  }

  annotationMap(annotations: unknown, dir: Direction): unknown {
    return mapRecord(annotations, (k) => this.key('annotations', k, dir));
  }

  finalizerList(finalizers: unknown, dir: Direction): unknown {
    if (!Array.isArray(finalizers)) return finalizers;
    return finalizers.map((f: unknown) => (typeof f === 'string' ? this.key('finalizers', f, dir) : f));
  }
}

/** The markers without those containing another one (finding the shorter one is enough). */
function minimalMarkers(values: string[]): string[] {
  const set = [...new Set(values)];
  return set.filter((m) => !set.some((other) => other !== m && m.includes(other)));
}

/**
 * A plain object with its keys mapped by `key` and its values by `mapValue` (given the key before and after),
 * in the same order: a copy once an entry changes, the object itself when none does (most maps on
 * the way through have nothing to rename); anything else is returned as it is.
 */
export function mapRecord(value: unknown, key: (k: string) => string, mapValue?: (k: string, nk: string, v: unknown) => unknown): unknown {
  if (!isRecord(value)) return value;
  let out: Record<string, unknown> | undefined;
  let index = 0;
  for (const k in value) {
    const v = value[k];
    const nk = key(k);
    const nv = mapValue === undefined ? v : mapValue(k, nk, v);
    if (out === undefined && (nk !== k || nv !== v)) out = entriesBefore(value, index);
    if (out !== undefined) out[nk] = nv;
    index += 1;
  }
  return out ?? value;
}

/** A copy of the first `count` entries of `value`. */
function entriesBefore(value: Record<string, unknown>, count: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let index = 0;
  for (const k in value) {
    if (index === count) break;
    out[k] = value[k];
    index += 1;
  }
  return out;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
