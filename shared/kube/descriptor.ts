import type { ResourceDefinition } from '../api/k8s/crd.js';

/** Identifies a resource type on the apiserver: where it lives (group/version/plural) and what it is. */
export interface ResourceDescriptor {
  /** API group; `''` is the core group (`/api/v1`). */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The metadata fields this library reads and writes; schemas may carry more. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
}

/** Any Kubernetes object as this library sees it. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/** Addresses one object: name plus namespace for namespaced resources. */
export interface ObjectRef {
  namespace?: string | undefined;
  name: string;
}

/** The descriptor (REST coordinates) of one of the module's resource definitions (shared/api). */
export function descriptorOf(def: Pick<ResourceDefinition, 'group' | 'version' | 'plural' | 'kind' | 'scope'>): ResourceDescriptor {
  return { group: def.group, version: def.version, plural: def.plural, kind: def.kind, namespaced: def.scope === 'Namespaced' };
}

/** `group/version`, or `version` for the core group. */
export function apiVersionOf(d: ResourceDescriptor): string {
  return d.group === '' ? d.version : `${d.group}/${d.version}`;
}

export interface PathParts {
  namespace?: string | undefined;
  name?: string | undefined;
  subresource?: string | undefined;
}

/**
 * The REST path for a descriptor: the collection (optionally in a namespace), one object, or one of its
 * subresources. A namespaced resource without a namespace addresses all namespaces (list/watch only).
 */
export function resourcePath(d: ResourceDescriptor, parts: PathParts = {}): string {
  const prefix = d.group === '' ? `/api/${d.version}` : `/apis/${d.group}/${d.version}`;
  const scoped = d.namespaced && parts.namespace !== undefined ? `${prefix}/namespaces/${encodeURIComponent(parts.namespace)}` : prefix;
  let path = `${scoped}/${d.plural}`;
  if (parts.name !== undefined) path += `/${encodeURIComponent(parts.name)}`;
  if (parts.subresource !== undefined) path += `/${parts.subresource}`;
  return path;
}

/** The store key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(ref: { namespace?: string | undefined; name?: string | undefined }): string {
  return ref.namespace ? `${ref.namespace}/${ref.name ?? ''}` : (ref.name ?? '');
}

/** The ref of an object, for calls that address it by name. */
export function refOf(obj: KubeObject): ObjectRef {
  return { namespace: obj.metadata.namespace, name: obj.metadata.name ?? '' };
}

/** A human name for logs and errors: `Kind ns/name`. */
export function describeObject(d: Pick<ResourceDescriptor, 'kind'>, ref: ObjectRef): string {
  return `${d.kind} ${objectKey(ref)}`;
}
