import { BadRequestError, ConflictError } from '../errors/index.js';
import type { KubeObject, OwnerReference } from './descriptor.js';

export interface OwnerRefOptions {
  /** Mark the owner as the managing controller (at most one per object). */
  controller?: boolean;
  /** Foreground deletion of the owner waits for this object. */
  blockOwnerDeletion?: boolean;
}

/** An ownerReference pointing at `owner`, which must carry apiVersion, kind, name and uid. */
export function ownerReferenceTo(owner: KubeObject, opts: OwnerRefOptions = {}): OwnerReference {
  const { apiVersion, kind } = owner;
  const { name, uid } = owner.metadata;
  if (!apiVersion || !kind || !name || !uid) {
    throw new BadRequestError(`an owner needs apiVersion, kind, metadata.name and metadata.uid (got ${kind ?? '?'} ${name ?? '?'})`);
  }
  const ref: OwnerReference = { apiVersion, kind, name, uid };
  if (opts.controller !== undefined) ref.controller = opts.controller;
  if (opts.blockOwnerDeletion !== undefined) ref.blockOwnerDeletion = opts.blockOwnerDeletion;
  return ref;
}

/** The controller ownerReference of an object, if any. */
export function controllerRefOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/** Whether `owner` is the controller of `obj` (matched by uid). */
export function hasControllerReference(obj: KubeObject, owner: KubeObject): boolean {
  const ref = controllerRefOf(obj);
  return ref !== undefined && ref.uid === owner.metadata.uid;
}

/**
 * The ownerReferences of `obj` with `owner` as its controller (blockOwnerDeletion on), as a new list;
 * the caller writes it. Throws ConflictError if another object already controls it, and
 * BadRequestError if a namespaced owner sits in a different namespace (the garbage collector would
 * treat the reference as dangling). Cluster-scoped owners are recognised by an absent namespace.
 */
export function withControllerReference(obj: KubeObject, owner: KubeObject): OwnerReference[] {
  const existing = controllerRefOf(obj);
  if (existing && existing.uid !== owner.metadata.uid) {
    throw new ConflictError(`${obj.kind ?? 'object'} ${obj.metadata.name ?? ''} is already controlled by ${existing.kind} ${existing.name}`);
  }
  const ownerNs = owner.metadata.namespace;
  if (ownerNs && ownerNs !== obj.metadata.namespace) {
    const where = obj.metadata.namespace ?? '(cluster)';
    throw new BadRequestError(`owner ${owner.kind ?? ''} ${ownerNs}/${owner.metadata.name ?? ''} is in another namespace than ${where}`);
  }
  const ref = ownerReferenceTo(owner, { controller: true, blockOwnerDeletion: true });
  const others = (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== ref.uid);
  return [...others, ref];
}
