/**
 * OpenAPI documents (v2 `/openapi/v2`, v3 index `/openapi/v3` and group documents) with renamed groups,
 * resources and kinds restored: path keys, schema names (`io.deckhouse.virtualization.internal.v1.
 * InternalVirtualizationVirtualMachine` → `io.kubevirt.v1.VirtualMachine`), `$ref`s and
 * `x-kubernetes-group-version-kind`. Restore direction only.
 */
import { isRecord, type Renamer } from './names.js';

type Obj = Record<string, unknown>;

const reverse = (group: string): string => group.split('.').reverse().join('.');

/** A path `/apis/<group>/<version>/...` (or `apis/<group>/<version>` in the v3 index) restored. */
export function restoreApiPath(r: Renamer, path: string): string {
  const q = path.indexOf('?');
  const bare = q === -1 ? path : path.slice(0, q);
  const segs = bare.split('/');
  const at = segs.indexOf('apis');
  const group = at === -1 ? undefined : segs[at + 1];
  if (group === undefined || r.renamedGroupRule(group) === undefined) return path;
  for (let i = at + 3; i < segs.length; i++) {
    const s = segs[i] ?? '';
    if (r.match(group, s, 'restore') !== undefined) segs[i] = r.resourceName(group, s, 'restore');
  }
  segs[at + 1] = r.group(group, 'restore');
  return segs.join('/') + (q === -1 ? '' : path.slice(q));
}

/** A schema name `<reversed group>.<version>.<Kind>` restored. */
export function restoreSchemaName(r: Renamer, name: string): string {
  for (const g of r.rules.groups) {
    const prefix = `${reverse(g.renamed)}.`;
    if (!name.startsWith(prefix)) continue;
    const rest = name.slice(prefix.length);
    const dot = rest.indexOf('.');
    if (dot === -1) return name;
    return `${reverse(g.group)}.${rest.slice(0, dot + 1)}${r.kind(g.renamed, rest.slice(dot + 1), 'restore')}`;
  }
  return name;
}

function restoreRef(r: Renamer, ref: string): string {
  const slash = ref.lastIndexOf('/');
  return slash === -1 ? ref : ref.slice(0, slash + 1) + restoreSchemaName(r, ref.slice(slash + 1));
}

function renameKeys(o: unknown, fn: (key: string) => string): void {
  if (!isRecord(o)) return;
  for (const key of Object.keys(o)) {
    const renamed = fn(key);
    if (renamed === key) continue;
    o[renamed] = o[key];
    delete o[key];
  }
}

/** Restore an OpenAPI document (any version) in place. */
export function restoreOpenApi(r: Renamer, doc: Obj): void {
  renameKeys(doc.paths, (p) => restoreApiPath(r, p));
  if (isRecord(doc.paths)) {
    for (const entry of Object.values(doc.paths)) {
      if (isRecord(entry) && typeof entry.serverRelativeURL === 'string') entry.serverRelativeURL = restoreApiPath(r, entry.serverRelativeURL);
    }
  }
  renameKeys(doc.definitions, (n) => restoreSchemaName(r, n));
  if (isRecord(doc.components)) renameKeys(doc.components.schemas, (n) => restoreSchemaName(r, n));
  walk(r, doc);
}

function walk(r: Renamer, node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(r, item);
    return;
  }
  if (!isRecord(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') node[key] = restoreRef(r, value);
    else if (key === 'x-kubernetes-group-version-kind') {
      // An array in schemas, a single object in path operations.
      for (const gvk of Array.isArray(value) ? value : [value]) {
        if (!isRecord(gvk) || typeof gvk.group !== 'string' || typeof gvk.kind !== 'string') continue;
        gvk.kind = r.kind(gvk.group, gvk.kind, 'restore');
        gvk.group = r.group(gvk.group, 'restore');
      }
    } else if (typeof value === 'object' && value !== null) walk(r, value);
  }
}
