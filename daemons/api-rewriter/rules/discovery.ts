/**
 * Discovery documents from the apiserver with renamed groups shown under their original names:
 * APIGroupList (`/apis`), APIGroup, APIResourceList and the aggregated APIGroupDiscoveryList. An
 * original-named group that also exists upstream (real KubeVirt CRDs) is dropped so names never repeat.
 * Only the restore direction exists: clients never send discovery documents.
 */
import { isRecord, type Renamer } from './names.js';

type Obj = Record<string, unknown>;

function restoreGroupVersion(r: Renamer, gv: unknown): unknown {
  if (typeof gv !== 'string') return gv;
  const slash = gv.indexOf('/');
  return slash === -1 ? gv : r.group(gv.slice(0, slash), 'restore') + gv.slice(slash);
}

/** One APIGroup in place; true when it was a renamed group. */
export function restoreApiGroup(r: Renamer, g: Obj): boolean {
  if (typeof g.name !== 'string' || r.renamedGroupRule(g.name) === undefined) return false;
  g.name = r.group(g.name, 'restore');
  if (Array.isArray(g.versions)) for (const v of g.versions) if (isRecord(v)) v.groupVersion = restoreGroupVersion(r, v.groupVersion);
  if (isRecord(g.preferredVersion)) g.preferredVersion.groupVersion = restoreGroupVersion(r, g.preferredVersion.groupVersion);
  return true;
}

/** Drop original-named entries that a restored entry replaces. */
function withoutDuplicates<T>(items: T[], nameOf: (item: T) => unknown, restored: Set<T>): T[] {
  const names = new Set([...restored].map(nameOf));
  return items.filter((item) => restored.has(item) || !names.has(nameOf(item)));
}

export function restoreApiGroupList(r: Renamer, list: Obj): void {
  if (!Array.isArray(list.groups)) return;
  const groups = list.groups.filter(isRecord);
  const restored = new Set(groups.filter((g) => restoreApiGroup(r, g)));
  list.groups = withoutDuplicates(groups, (g) => g.name, restored);
}

export function restoreApiResourceList(r: Renamer, list: Obj): void {
  if (typeof list.groupVersion !== 'string') return;
  const group = list.groupVersion.split('/')[0] ?? '';
  if (r.renamedGroupRule(group) === undefined) return;
  list.groupVersion = restoreGroupVersion(r, list.groupVersion);
  if (Array.isArray(list.resources)) for (const res of list.resources) if (isRecord(res)) restoreResourceEntry(r, group, res, 'name', 'singularName', 'kind');
}

/** An APIResource (v1 discovery) or APIResourceDiscovery (aggregated) entry of a renamed group. */
function restoreResourceEntry(r: Renamer, group: string, res: Obj, nameField: string, singularField: string, kindField: string | undefined): void {
  const name = res[nameField];
  if (typeof name !== 'string') return;
  const m = r.match(group, name.split('/')[0] ?? name, 'restore');
  if (m === undefined) return;
  res[nameField] = r.resourceName(group, name, 'restore');
  if (typeof res[singularField] === 'string' && res[singularField] !== '') res[singularField] = m.resource.singular;
  if (kindField !== undefined && typeof res[kindField] === 'string') res[kindField] = r.kind(group, res[kindField], 'restore');
  if (Array.isArray(res.shortNames)) res.shortNames = res.shortNames.map((s: unknown) => (typeof s === 'string' ? r.shortName(s, 'restore') : s));
  if (Array.isArray(res.categories)) res.categories = [...m.resource.categories];
  if (typeof res.group === 'string') res.group = r.group(res.group, 'restore');
}

function restoreResponseKind(r: Renamer, rk: unknown): void {
  if (!isRecord(rk) || typeof rk.group !== 'string' || typeof rk.kind !== 'string') return;
  rk.kind = r.kind(rk.group, rk.kind, 'restore');
  rk.group = r.group(rk.group, 'restore');
}

export function restoreApiGroupDiscoveryList(r: Renamer, list: Obj): void {
  if (!Array.isArray(list.items)) return;
  const items = list.items.filter(isRecord);
  const restored = new Set<Obj>();
  for (const item of items) {
    const meta = item.metadata;
    if (!isRecord(meta) || typeof meta.name !== 'string') continue;
    const group = meta.name;
    if (r.renamedGroupRule(group) === undefined) continue;
    restored.add(item);
    meta.name = r.group(group, 'restore');
    if (!Array.isArray(item.versions)) continue;
    for (const v of item.versions) {
      if (!isRecord(v) || !Array.isArray(v.resources)) continue;
      for (const res of v.resources) {
        if (!isRecord(res)) continue;
        restoreResourceEntry(r, group, res, 'resource', 'singularResource', undefined);
        restoreResponseKind(r, res.responseKind);
        if (Array.isArray(res.subresources)) for (const sub of res.subresources) if (isRecord(sub)) restoreResponseKind(r, sub.responseKind);
      }
    }
  }
  list.items = withoutDuplicates(items, (i) => (isRecord(i.metadata) ? i.metadata.name : undefined), restored);
}
