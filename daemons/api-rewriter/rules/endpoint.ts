/**
 * Request classification: what a path addresses (discovery, OpenAPI, a resource of some group), the
 * path and query to send upstream, and how bodies are treated:
 * - `rewrite`: a renamed group or resource, discovery, OpenAPI: bodies are always parsed and rewritten;
 * - `inspect`: built-in resources whose objects may carry renamed labels, selectors or rules (pods,
 *   RBAC, webhooks, CRDs, ...): bodies are parsed only when they contain a renamed or original name;
 * - `pass`: anything else: bytes flow through untouched.
 */
import type { Direction, Renamer, ResourceMatch } from './names.js';
import { rewriteLabelSelectorString } from './selector.js';

export type BodyMode = 'rewrite' | 'inspect' | 'pass';

export type EndpointKind = 'apis' | 'group' | 'groupVersion' | 'resource' | 'openapi-v2' | 'openapi-v3-index' | 'openapi-v3-doc' | 'other';

export interface Endpoint {
  readonly kind: EndpointKind;
  /** The group ('' for core) and version of group, groupVersion, resource and openapi-v3-doc endpoints. */
  readonly group?: string;
  readonly version?: string;
  readonly namespace?: string;
  readonly resource?: string;
  readonly name?: string;
  readonly subresource?: string;
  readonly watch: boolean;
  /** The renamed resource (original names) a resource endpoint addresses. */
  readonly match?: ResourceMatch;
  /** The path addresses a group with rules (its path is rewritten). */
  readonly renamedGroup: boolean;
}

export interface RequestPlan {
  readonly endpoint: Endpoint;
  /** Path and query for the upstream request. */
  readonly upstreamUrl: string;
  readonly body: BodyMode;
  /** The kind (original naming) a patch without a kind is about. */
  readonly hintKind?: string;
}

/** Built-in resources whose bodies may hold renamed names (the original's list). */
const INSPECTED = new Set([
  'nodes',
  'pods',
  'configmaps',
  'secrets',
  'services',
  'serviceaccounts',
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'clusterroles',
  'roles',
  'rolebindings',
  'clusterrolebindings',
  'deployments',
  'statefulsets',
  'daemonsets',
  'replicasets',
  'jobs',
  'persistentvolumeclaims',
  'prometheusrules',
  'servicemonitors',
  'poddisruptionbudgets',
  'controllerrevisions',
  'apiservices',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'events',
  'customresourcedefinitions',
]);

const KIND_OF_BUILTIN: Readonly<Record<string, string>> = {
  nodes: 'Node',
  pods: 'Pod',
  services: 'Service',
  mutatingwebhookconfigurations: 'MutatingWebhookConfiguration',
  validatingwebhookconfigurations: 'ValidatingWebhookConfiguration',
  clusterroles: 'ClusterRole',
  roles: 'Role',
  deployments: 'Deployment',
  statefulsets: 'StatefulSet',
  daemonsets: 'DaemonSet',
  replicasets: 'ReplicaSet',
  jobs: 'Job',
  persistentvolumeclaims: 'PersistentVolumeClaim',
  servicemonitors: 'ServiceMonitor',
  poddisruptionbudgets: 'PodDisruptionBudget',
  controllerrevisions: 'ControllerRevision',
  validatingadmissionpolicies: 'ValidatingAdmissionPolicy',
  validatingadmissionpolicybindings: 'ValidatingAdmissionPolicyBinding',
  events: 'Event',
  customresourcedefinitions: 'CustomResourceDefinition',
};

/** Classify a client request (`url`: path and query as received) and build its upstream URL. */
export function planRequest(r: Renamer, url: string): RequestPlan {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q + 1);
  const endpoint = parsePath(r, path, query);
  const upstreamPath = rewritePath(r, endpoint, path);
  const upstreamQuery = query === '' ? '' : rewriteQuery(r, endpoint, query, 'rename');
  const upstreamUrl = upstreamQuery === '' ? upstreamPath : `${upstreamPath}?${upstreamQuery}`;
  const base = { endpoint, upstreamUrl };
  switch (endpoint.kind) {
    case 'apis':
    case 'openapi-v2':
    case 'openapi-v3-index':
      return { ...base, body: 'rewrite' };
    case 'group':
    case 'groupVersion':
    case 'openapi-v3-doc':
      return { ...base, body: endpoint.renamedGroup ? 'rewrite' : 'pass' };
    case 'resource': {
      if (endpoint.match) return { ...base, body: 'rewrite', hintKind: endpoint.match.resource.kind };
      const res = endpoint.resource ?? '';
      const hintKind = KIND_OF_BUILTIN[res];
      return { ...base, body: INSPECTED.has(res) ? 'inspect' : 'pass', ...(hintKind !== undefined ? { hintKind } : {}) };
    }
    default:
      return { ...base, body: 'pass' };
  }
}

function parsePath(r: Renamer, path: string, query: string): Endpoint {
  const watchQuery = /(?:^|&)watch=(?:true|1)(?:&|$)/.test(query);
  const segs = path.split('/').filter((s) => s !== '');
  const other: Endpoint = { kind: 'other', watch: false, renamedGroup: false };
  if (segs[0] === 'openapi') {
    if (segs[1] === 'v2') return { ...other, kind: 'openapi-v2' };
    if (segs[1] === 'v3' && segs.length === 2) return { ...other, kind: 'openapi-v3-index' };
    if (segs[1] === 'v3' && segs[2] === 'apis' && segs.length === 5) {
      const group = segs[3] ?? '';
      return { ...other, kind: 'openapi-v3-doc', group, version: segs[4] ?? '', renamedGroup: r.groupRule(group) !== undefined };
    }
    return other;
  }
  let rest: string[];
  let group: string;
  if (segs[0] === 'api') {
    group = '';
    rest = segs.slice(1);
    if (rest.length === 0) return other;
  } else if (segs[0] === 'apis') {
    if (segs.length === 1) return { ...other, kind: 'apis' };
    group = segs[1] ?? '';
    const renamedGroup = r.groupRule(group) !== undefined;
    if (segs.length === 2) return { ...other, kind: 'group', group, renamedGroup };
    rest = segs.slice(2);
  } else {
    return other;
  }
  const version = rest[0] ?? '';
  const renamedGroup = group !== '' && r.groupRule(group) !== undefined;
  let parts = rest.slice(1);
  if (parts.length === 0) return { ...other, kind: 'groupVersion', group, version, renamedGroup };
  let watch = watchQuery;
  if (parts[0] === 'watch') {
    watch = true;
    parts = parts.slice(1);
  }
  let namespace: string | undefined;
  if (parts[0] === 'namespaces' && parts.length >= 3 && !(parts.length === 3 && (parts[2] === 'status' || parts[2] === 'finalize'))) {
    namespace = parts[1];
    parts = parts.slice(2);
  }
  const resource = parts[0] ?? '';
  const match = renamedGroup ? r.match(group, resource, 'rename') : undefined;
  return {
    kind: 'resource',
    group,
    version,
    resource,
    watch,
    renamedGroup,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(parts[1] !== undefined ? { name: parts[1] } : {}),
    ...(parts.length > 2 ? { subresource: parts.slice(2).join('/') } : {}),
    ...(match !== undefined ? { match } : {}),
  };
}

function rewritePath(r: Renamer, e: Endpoint, path: string): string {
  if (e.kind === 'openapi-v3-doc' && e.renamedGroup) return `/openapi/v3/apis/${r.group(e.group ?? '', 'rename')}/${e.version ?? ''}`;
  if (e.kind === 'resource' && e.group === 'apiextensions.k8s.io' && e.resource === 'customresourcedefinitions' && e.name !== undefined) {
    const renamed = r.crdName(e.name, 'rename');
    return renamed === e.name ? path : path.replace(`/customresourcedefinitions/${e.name}`, `/customresourcedefinitions/${renamed}`);
  }
  if (!e.renamedGroup || (e.kind !== 'group' && e.kind !== 'groupVersion' && e.kind !== 'resource')) return path;
  const group = e.group ?? '';
  const segs = path.split('/');
  // segs: ['', 'apis', group, version, ...]
  segs[2] = r.group(group, 'rename');
  if (e.match !== undefined) {
    let at = 4;
    if (segs[at] === 'watch') at++;
    if (e.namespace !== undefined) at += 2;
    if (segs[at] === e.resource) segs[at] = r.resource(e.match.resource.plural);
  }
  return segs.join('/');
}

/** labelSelector (always) and fieldSelector `metadata.name=<crd>` (CRD endpoints) in the other naming. */
export function rewriteQuery(r: Renamer, e: Endpoint, query: string, dir: Direction): string {
  if (!query.includes('labelSelector=') && !query.includes('fieldSelector=')) return query;
  const params = new URLSearchParams(query);
  let changed = false;
  const label = params.get('labelSelector');
  if (label !== null) {
    const rewritten = rewriteLabelSelectorString(r, label, dir);
    if (rewritten !== label) {
      params.set('labelSelector', rewritten);
      changed = true;
    }
  }
  const field = params.get('fieldSelector');
  if (field !== null && e.resource === 'customresourcedefinitions') {
    const rewritten = field.replace(/(metadata\.name\s*==?\s*)([^,]+)/g, (_all, op: string, name: string) => op + r.crdName(name.trim(), dir));
    if (rewritten !== field) {
      params.set('fieldSelector', rewritten);
      changed = true;
    }
  }
  return changed ? params.toString() : query;
}
