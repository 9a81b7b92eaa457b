/** VirtualMachine lookups: one GET per request (fresh, no cache to keep warm in a function that scales). */
import { virtualMachine } from '../../shared/api/resources/virtualmachine.js';
import { NotFoundError } from '../../shared/errors/index.js';
import { kubeObjectSchema, type KubeClient, type KubeObject, type ResourceClient } from '../../shared/kube/index.js';

export interface VmView {
  readonly object: KubeObject;
  readonly phase: string | undefined;
}

export class VmLookup {
  private readonly client: ResourceClient<KubeObject>;

  constructor(kube: KubeClient) {
    const d = virtualMachine;
    this.client = kube.resource({ group: d.group, version: d.version, plural: d.plural, kind: d.kind, namespaced: true }, kubeObjectSchema, 'subresources');
  }

  /** The VM, or undefined when it does not exist; other failures throw. */
  async get(namespace: string, name: string, signal?: AbortSignal): Promise<VmView | undefined> {
    try {
      const object = await this.client.get({ namespace, name }, { signal });
      const status = (object as { status?: { phase?: unknown } }).status;
      return { object, phase: typeof status?.phase === 'string' ? status.phase : undefined };
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }
}
