/**
 * Renaming inside Kubernetes objects: type meta of the renamed kinds and their lists, metadata of every
 * object (labels, annotations, finalizers, ownerReferences, managedFields), and the fields of the
 * built-in kinds that name groups, resources, kinds or labels (CRDs, RBAC rules, webhook and admission
 * policy rules, pod templates and selectors, PVC data sources, Events, Status). The functions change
 * the freshly parsed document they are given in place and return it (the proxy owns that document).
 */
import { isRecord, mapRecord, type Direction, type Renamer } from './names.js';

type Obj = Record<string, unknown>;

/** Rewrite one object (or list, or Table) in place; `hintKind` (original naming) is used when it has no kind (patches). */
export function rewriteObject(r: Renamer, value: unknown, dir: Direction, hintKind?: string): unknown {
  if (!isRecord(value)) return value;
  const kind = typeof value.kind === 'string' ? value.kind : undefined;
  const apiVersion = typeof value.apiVersion === 'string' ? value.apiVersion : undefined;
  if (kind !== undefined && apiVersion !== undefined) {
    const t = r.typeMeta(apiVersion, kind, dir);
    value.apiVersion = t.apiVersion;
    value.kind = t.kind;
  }
  rewriteMetadata(r, value.metadata, dir);
  rewriteByKind(r, value, kind ?? hintKind ?? '', dir);
  return value;
}

/** Metadata in the other naming. Restoring one object of a renamed kind also runs on text: keep text.ts in step. */
export function rewriteMetadata(r: Renamer, meta: unknown, dir: Direction): void {
  if (!isRecord(meta)) return;
  if (meta.labels !== undefined) meta.labels = r.labelMap(meta.labels, dir);
  if (meta.annotations !== undefined) meta.annotations = r.annotationMap(meta.annotations, dir);
  if (meta.finalizers !== undefined) meta.finalizers = r.finalizerList(meta.finalizers, dir);
  // Strategic merge patch directives about finalizers.
  for (const directive of ['$setElementOrder/finalizers', '$deleteFromPrimitiveList/finalizers']) {
    if (meta[directive] !== undefined) meta[directive] = r.finalizerList(meta[directive], dir);
  }
  if (Array.isArray(meta.ownerReferences)) for (const ref of meta.ownerReferences) rewriteTypeRef(r, ref, dir);
  if (Array.isArray(meta.managedFields)) {
    for (const mf of meta.managedFields) {
      if (!isRecord(mf)) continue;
      if (typeof mf.apiVersion === 'string') mf.apiVersion = groupVersion(r, mf.apiVersion, dir);
      if (isRecord(mf.fieldsV1)) rewriteFieldSet(r, mf.fieldsV1, dir);
    }
  }
}

/** The field sets under `f:metadata` that name labels, annotations and finalizers. */
export const FIELD_SETS = [
  ['f:labels', 'labels'],
  ['f:annotations', 'annotations'],
  ['f:finalizers', 'finalizers'],
] as const;

/**
 * The metadata part of a managedFields field set: `f:<label>` under `f:labels` and `f:annotations`,
 * `v:"<finalizer>"` under `f:finalizers`, so server-side apply owners follow the renamed keys.
 */
function rewriteFieldSet(r: Renamer, fields: Obj, dir: Direction): void {
  const meta = fields['f:metadata'];
  if (!isRecord(meta)) return;
  for (const [field, kind] of FIELD_SETS) {
    if (meta[field] !== undefined) meta[field] = mapRecord(meta[field], (k) => r.fieldKey(kind, k, dir));
  }
}

/** `{apiVersion, kind}` references (ownerReferences, Event involvedObject). */
function rewriteTypeRef(r: Renamer, ref: unknown, dir: Direction): void {
  if (!isRecord(ref) || typeof ref.apiVersion !== 'string' || typeof ref.kind !== 'string') return;
  const t = r.typeMeta(ref.apiVersion, ref.kind, dir);
  ref.apiVersion = t.apiVersion;
  ref.kind = t.kind;
}

/** `group/version` with only its group renamed. */
export function groupVersion(r: Renamer, gv: string, dir: Direction): string {
  const slash = gv.indexOf('/');
  if (slash === -1) return gv;
  return r.group(gv.slice(0, slash), dir) + gv.slice(slash);
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);

function rewriteByKind(r: Renamer, o: Obj, kind: string, dir: Direction): void {
  if (kind === 'Table') {
    if (Array.isArray(o.rows)) for (const row of o.rows) if (isRecord(row)) rewriteObject(r, row.object, dir);
    return;
  }
  if (kind.endsWith('List') && Array.isArray(o.items)) {
    const itemKind = kind.slice(0, -'List'.length);
    for (const item of o.items) rewriteObject(r, item, dir, itemKind);
    return;
  }
  const spec = isRecord(o.spec) ? o.spec : undefined;
  switch (kind) {
    case 'CustomResourceDefinition':
      rewriteCrd(r, o, dir);
      return;
    case 'Role':
    case 'ClusterRole':
      rewriteRules(r, o.rules, dir);
      return;
    case 'MutatingWebhookConfiguration':
    case 'ValidatingWebhookConfiguration':
      if (Array.isArray(o.webhooks)) for (const w of o.webhooks) if (isRecord(w)) rewriteRules(r, w.rules, dir);
      return;
    case 'ValidatingAdmissionPolicy':
    case 'MutatingAdmissionPolicy':
      if (spec && isRecord(spec.matchConstraints)) rewriteMatchResources(r, spec.matchConstraints, dir);
      return;
    case 'ValidatingAdmissionPolicyBinding':
    case 'MutatingAdmissionPolicyBinding':
      if (spec && isRecord(spec.matchResources)) rewriteMatchResources(r, spec.matchResources, dir);
      return;
    case 'Pod':
      rewritePodSpec(r, spec, dir);
      return;
    case 'Service':
      if (spec && spec.selector !== undefined) spec.selector = r.labelMap(spec.selector, dir);
      return;
    case 'PodDisruptionBudget':
    case 'ServiceMonitor':
      if (spec) rewriteLabelSelector(r, spec.selector, dir);
      return;
    case 'PersistentVolumeClaim':
      if (spec) for (const ref of [spec.dataSource, spec.dataSourceRef]) rewriteGroupKindRef(r, ref, 'apiGroup', dir);
      return;
    case 'Event':
      rewriteTypeRef(r, o.involvedObject, dir);
      rewriteTypeRef(r, o.regarding, dir);
      rewriteTypeRef(r, o.related, dir);
      return;
    case 'ControllerRevision':
      rewriteObject(r, o.data, dir);
      return;
    case 'Status':
      rewriteStatus(r, o, dir);
      return;
    default:
      if (WORKLOADS.has(kind) && spec) {
        rewriteLabelSelector(r, spec.selector, dir);
        if (isRecord(spec.template)) {
          rewriteMetadata(r, spec.template.metadata, dir);
          rewritePodSpec(r, spec.template.spec, dir);
        }
      }
  }
}

function rewriteCrd(r: Renamer, crd: Obj, dir: Direction): void {
  const meta = crd.metadata;
  if (isRecord(meta) && typeof meta.name === 'string') meta.name = r.crdName(meta.name, dir);
  const spec = crd.spec;
  if (!isRecord(spec) || typeof spec.group !== 'string') return;
  const group = spec.group;
  const rule = dir === 'rename' ? r.groupRule(group) : r.renamedGroupRule(group);
  if (rule === undefined) return;
  spec.group = dir === 'rename' ? rule.renamed : rule.group;
  for (const names of [spec.names, isRecord(crd.status) ? crd.status.acceptedNames : undefined]) {
    if (!isRecord(names) || typeof names.plural !== 'string') continue;
    const m = r.match(group, names.plural, dir);
    if (m === undefined) continue;
    const res = m.resource;
    const p = r.rules.kindPrefix;
    if (dir === 'rename') {
      Object.assign(names, { kind: p + res.kind, listKind: p + res.listKind, plural: r.resource(res.plural), singular: r.resource(res.singular) });
      if (Array.isArray(names.shortNames)) names.shortNames = names.shortNames.map((s: unknown) => (typeof s === 'string' ? r.shortName(s, dir) : s));
      if (names.categories !== undefined) names.categories = [...r.rules.renamedCategories];
    } else {
      Object.assign(names, { kind: res.kind, listKind: res.listKind, plural: res.plural, singular: res.singular });
      if (Array.isArray(names.shortNames)) names.shortNames = names.shortNames.map((s: unknown) => (typeof s === 'string' ? r.shortName(s, dir) : s));
      if (names.categories !== undefined) names.categories = [...res.categories];
    }
  }
}

/** RBAC / webhook rules: `apiGroups` and `resources` (with `/subresource` and `*` kept). */
function rewriteRules(r: Renamer, rules: unknown, dir: Direction): void {
  if (!Array.isArray(rules)) return;
  for (const rule of rules) {
    if (!isRecord(rule) || !Array.isArray(rule.apiGroups)) continue;
    const groups = rule.apiGroups.filter((g): g is string => typeof g === 'string');
    if (Array.isArray(rule.resources)) {
      rule.resources = rule.resources.map((res: unknown) => {
        if (typeof res !== 'string') return res;
        for (const g of groups) {
          const mapped = r.resourceName(g, res, dir);
          if (mapped !== res) return mapped;
        }
        return res;
      });
    }
    rule.apiGroups = rule.apiGroups.map((g: unknown) => (typeof g === 'string' ? r.group(g, dir) : g));
  }
}

function rewriteMatchResources(r: Renamer, match: Obj, dir: Direction): void {
  rewriteRules(r, match.resourceRules, dir);
  rewriteRules(r, match.excludeResourceRules, dir);
}

/** `{apiGroup, kind}` references (PVC data sources). */
function rewriteGroupKindRef(r: Renamer, ref: unknown, groupField: string, dir: Direction): void {
  if (!isRecord(ref) || typeof ref[groupField] !== 'string' || typeof ref.kind !== 'string') return;
  const group = ref[groupField];
  ref.kind = r.kind(group, ref.kind, dir);
  ref[groupField] = r.group(group, dir);
}

export function rewriteLabelSelector(r: Renamer, selector: unknown, dir: Direction): void {
  if (!isRecord(selector)) return;
  if (selector.matchLabels !== undefined) selector.matchLabels = r.labelMap(selector.matchLabels, dir);
  rewriteExpressions(r, selector.matchExpressions, dir);
}

function rewriteExpressions(r: Renamer, expressions: unknown, dir: Direction): void {
  if (!Array.isArray(expressions)) return;
  for (const e of expressions) {
    if (!isRecord(e) || typeof e.key !== 'string') continue;
    const key = r.key('labels', e.key, dir);
    const original = dir === 'rename' ? e.key : key;
    e.key = key;
    if (Array.isArray(e.values)) e.values = e.values.map((v: unknown) => (typeof v === 'string' ? r.labelValue(original, v, dir) : v));
  }
}

function rewritePodSpec(r: Renamer, spec: unknown, dir: Direction): void {
  if (!isRecord(spec)) return;
  if (spec.nodeSelector !== undefined) spec.nodeSelector = r.labelMap(spec.nodeSelector, dir);
  const affinity = spec.affinity;
  if (!isRecord(affinity)) return;
  const node = affinity.nodeAffinity;
  if (isRecord(node)) {
    const required = node.requiredDuringSchedulingIgnoredDuringExecution;
    if (isRecord(required) && Array.isArray(required.nodeSelectorTerms)) {
      for (const term of required.nodeSelectorTerms) if (isRecord(term)) rewriteExpressions(r, term.matchExpressions, dir);
    }
    if (Array.isArray(node.preferredDuringSchedulingIgnoredDuringExecution)) {
      for (const p of node.preferredDuringSchedulingIgnoredDuringExecution) {
        if (isRecord(p) && isRecord(p.preference)) rewriteExpressions(r, p.preference.matchExpressions, dir);
      }
    }
  }
  for (const podAffinity of [affinity.podAffinity, affinity.podAntiAffinity]) {
    if (!isRecord(podAffinity)) continue;
    const required = podAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    if (Array.isArray(required)) for (const term of required) if (isRecord(term)) rewriteLabelSelector(r, term.labelSelector, dir);
    const preferred = podAffinity.preferredDuringSchedulingIgnoredDuringExecution;
    if (Array.isArray(preferred)) {
      for (const p of preferred) if (isRecord(p) && isRecord(p.podAffinityTerm)) rewriteLabelSelector(r, p.podAffinityTerm.labelSelector, dir);
    }
  }
}

/** Error Status: details (group, kind: a plural or a kind) and the names inside the message. */
function rewriteStatus(r: Renamer, status: Obj, dir: Direction): void {
  const details = status.details;
  if (isRecord(details) && typeof details.group === 'string') {
    const group = details.group;
    if (typeof details.kind === 'string') {
      const plural = r.resourceName(group, details.kind, dir);
      details.kind = plural !== details.kind ? plural : r.kind(group, details.kind, dir);
    }
    details.group = r.group(group, dir);
  }
  if (typeof status.message === 'string') status.message = rewriteMessage(r, status.message, dir);
}

/** `<plural>.<group>` and `<Kind>.<group>` inside free text (error messages). */
export function rewriteMessage(r: Renamer, text: string, dir: Direction): string {
  const needle = dir === 'rename' ? '.kubevirt.io' : r.rules.resourcePrefix;
  if (!text.includes(needle) && !(dir === 'restore' && text.includes(r.rules.kindPrefix))) return text;
  let out = text;
  for (const g of r.rules.groups) {
    for (const res of g.resources) {
      const pairs: [string, string][] = [
        [`${res.plural}.${g.group}`, `${r.resource(res.plural)}.${g.renamed}`],
        [`${res.kind}.${g.group}`, `${r.rules.kindPrefix}${res.kind}.${g.renamed}`],
      ];
      for (const [original, renamed] of pairs) {
        out = dir === 'rename' ? out.split(original).join(renamed) : out.split(renamed).join(original);
      }
    }
  }
  return out;
}
