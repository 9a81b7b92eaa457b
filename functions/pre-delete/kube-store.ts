import { KubeClient, kubeObjectSchema, type ResourceClient, type ResourceDescriptor } from '../../shared/kube/index.js';
import { NotFoundError } from '../../shared/errors/index.js';
import type { TargetStore } from './cleanup.js';
import type { Target } from './config.js';

const FIELD_MANAGER = 'virtualization-pre-delete';

/** Targets on the apiserver: a delete and a get per call, NotFound meaning "not there". */
export class KubeTargetStore implements TargetStore {
  constructor(private readonly kube: KubeClient) {}

  async delete(target: Target, signal: AbortSignal): Promise<boolean> {
    return present(this.client(target).delete(refOf(target), { signal }));
  }

  async exists(target: Target, signal: AbortSignal): Promise<boolean> {
    return present(this.client(target).get(refOf(target), { signal }));
  }

  close(): void {
    this.kube.close();
  }

  private client(target: Target): ResourceClient<{ metadata: object }> {
    return this.kube.resource(targetDescriptor(target), kubeObjectSchema, FIELD_MANAGER);
  }
}

/** A target's descriptor; the kind is not known from a GVR and only names the object in messages. */
function targetDescriptor(target: Target): ResourceDescriptor {
  const { group, version, resource } = target.gvr;
  return { group, version, plural: resource, kind: resource, namespaced: target.namespace !== undefined };
}

/** `resource namespace/name` (or `resource name`), for logs and error messages. */
export function describeTarget(target: Target): string {
  const group = target.gvr.group === '' ? '' : `.${target.gvr.group}`;
  return `${target.gvr.resource}${group} ${target.namespace === undefined ? '' : `${target.namespace}/`}${target.name}`;
}

const refOf = (target: Target): { name: string; namespace?: string | undefined } => ({ name: target.name, namespace: target.namespace });

async function present(call: Promise<unknown>): Promise<boolean> {
  try {
    await call;
    return true;
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}
