/**
 * The real Enrichment: one informer per resource, started on first use, answering from their stores
 * and, for objects already deleted, from the deleted-objects cache. Nothing here blocks a lookup: an
 * informer that has not synced (or an apiserver that is down) simply answers undefined.
 */
import { Informer, objectKey, type KubeClient, type KubeObject, type ResourceClient } from '../../shared/kube/index.js';
import type { Logger } from '../../shared/log/index.js';
import { AdminCheck } from './admin-check.js';
import { DeletedCache } from './deleted-cache.js';
import type { Enrichment, UserRef } from './enrichment.js';
import { KEPT_AFTER_DELETE, resources, trimmed, type ResourceName, type ViewOf } from './kube-resources.js';

const FIELD_MANAGER = 'virtualization-audit';

export interface KubeEnrichmentOptions {
  readonly client: KubeClient;
  readonly log: Logger;
  /** How long deleted objects stay findable. */
  readonly deletedTtlMs: number;
  /** How long an access-review answer is reused. */
  readonly adminTtlMs: number;
  readonly deletedCapacity?: number;
}

type Informers = { [R in ResourceName]: Informer<ViewOf<R> & KubeObject> };

export class KubeEnrichment implements Enrichment {
  private informers: Informers | undefined;
  private readonly deleted: DeletedCache;
  private readonly admin: AdminCheck;

  constructor(private readonly options: KubeEnrichmentOptions) {
    this.deleted = new DeletedCache({ ttlMs: options.deletedTtlMs, capacity: options.deletedCapacity ?? 50_000 });
    this.admin = new AdminCheck({ call: (req) => options.client.rest.request(req), ttlMs: options.adminTtlMs, log: options.log });
  }

  /** Start every informer (idempotent); the first call is the "first use". */
  start(): void {
    if (this.informers !== undefined) return;
    const make = <R extends ResourceName>(name: R): Informer<ViewOf<R> & KubeObject> => {
      const { descriptor, schema } = resources[name];
      const client = this.options.client.resource(descriptor, schema, FIELD_MANAGER) as ResourceClient<ViewOf<R> & KubeObject>;
      const informer = new Informer({ client, logger: this.options.log.child({ informer: descriptor.plural }), transform: trimmed(name) });
      if (KEPT_AFTER_DELETE.has(name)) {
        informer.on('delete', (obj) => this.deleted.put(descriptor.plural, obj.metadata.namespace, obj.metadata.name ?? '', obj));
      }
      return informer.start();
    };
    this.informers = {
      vm: make('vm'),
      vd: make('vd'),
      vmop: make('vmop'),
      pod: make('pod'),
      node: make('node'),
      module: make('module'),
      moduleConfig: make('moduleConfig'),
      internalVMI: make('internalVMI'),
    };
  }

  /** Start if needed and wait until every informer has synced or `timeoutMs` passed; true if all synced. */
  async ready(timeoutMs: number): Promise<boolean> {
    this.start();
    const all = Promise.all(Object.values(this.informers ?? {}).map((i: Informer<KubeObject>) => i.synced)).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([all.catch(() => false), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    const informers = this.informers;
    this.informers = undefined;
    await Promise.all(Object.values(informers ?? {}).map((i: Informer<KubeObject>) => i.stop()));
    this.options.client.close();
  }

  /** Where a lookup would be answered from: the informer, the deleted-objects cache, or nowhere. */
  sourceOf(name: ResourceName, namespace: string | undefined, objectName: string): 'informer' | 'deleted' | undefined {
    if (this.live(name, namespace, objectName) !== undefined) return 'informer';
    return this.find(name, namespace, objectName) === undefined ? undefined : 'deleted';
  }

  private live<R extends ResourceName>(name: R, namespace: string | undefined, objectName: string): ViewOf<R> | undefined {
    const informer = this.informers?.[name] as Informer<ViewOf<R> & KubeObject> | undefined;
    return informer?.store.get(objectKey({ namespace, name: objectName }));
  }

  private find<R extends ResourceName>(name: R, namespace: string | undefined, objectName: string): ViewOf<R> | undefined {
    const live = this.live(name, namespace, objectName);
    if (live !== undefined || !KEPT_AFTER_DELETE.has(name)) return live;
    return this.deleted.get<ViewOf<R>>(resources[name].descriptor.plural, namespace, objectName);
  }

  getVM(namespace: string, name: string): ViewOf<'vm'> | undefined {
    return this.find('vm', namespace, name);
  }
  getVD(namespace: string, name: string): ViewOf<'vd'> | undefined {
    return this.find('vd', namespace, name);
  }
  getVMOP(namespace: string, name: string): ViewOf<'vmop'> | undefined {
    return this.find('vmop', namespace, name);
  }
  getPod(namespace: string, name: string): ViewOf<'pod'> | undefined {
    return this.find('pod', namespace, name);
  }
  getNode(name: string): ViewOf<'node'> | undefined {
    return this.find('node', undefined, name);
  }
  getModule(name: string): ViewOf<'module'> | undefined {
    return this.find('module', undefined, name);
  }
  getModuleConfig(name: string): ViewOf<'moduleConfig'> | undefined {
    return this.find('moduleConfig', undefined, name);
  }
  getInternalVMI(namespace: string, name: string): ViewOf<'internalVMI'> | undefined {
    return this.find('internalVMI', namespace, name);
  }
  isAdmin(user: UserRef): Promise<boolean | undefined> {
    return this.admin.isAdmin(user);
  }
}
