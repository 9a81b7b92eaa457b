/**
 * Where NodePrepareResources reads its ResourceClaims: an informer over every claim (the API has no
 * selector for "allocated from this node's pool of this driver": claims carry no such label and their
 * field selectors cover only name and namespace), whose store keeps in full only the claims allocated
 * from this node's pool by this driver and the bare identity of the rest. A prepare reads the claim
 * from the store when it holds that uid allocated here, and otherwise (a claim allocated a moment ago,
 * not yet seen; a stale copy of a re-created one; before the first list) with a GET.
 */
import type { ResourceClaim } from '../../../shared/api/k8s/resource.js';
import { Informer, type ResourceClient } from '../../../shared/kube/index.js';
import type { Logger } from '../../../shared/log/index.js';
import type { Counter } from '../../../shared/metrics/index.js';

export interface ClaimRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** What the preparer needs of ResourceClaims: one read by identity, the annotation patch. */
export interface ClaimSource {
  read(ref: ClaimRef): Promise<ResourceClaim>;
  mergePatch: ResourceClient<ResourceClaim>['mergePatch'];
}

/** Whether a claim has a device allocated by `driver` from pool `pool`. */
export function allocatedHere(claim: ResourceClaim, driver: string, pool: string): boolean {
  return claim.status?.allocation?.devices?.results?.some((r) => r.driver === driver && r.pool === pool) ?? false;
}

/** Keep a claim of this node whole; of any other claim only what identifies its version. */
export function keepOnlyOurs(driver: string, pool: string): (claim: ResourceClaim) => ResourceClaim {
  return (claim) => {
    if (allocatedHere(claim, driver, pool)) return claim;
    const { name, namespace, uid, resourceVersion } = claim.metadata;
    return { apiVersion: claim.apiVersion, kind: claim.kind, metadata: { name, namespace, uid, resourceVersion } };
  };
}

export interface ClaimCacheOptions {
  client: ResourceClient<ResourceClaim>;
  driver: string;
  nodeName: string;
  signal: AbortSignal;
  log: Logger;
  /** Reads by where they were served from (`cache`, `apiserver`). */
  reads?: Counter<'source'>;
}

/** The informer-backed ClaimSource of a running daemon. */
export class ClaimCache implements ClaimSource {
  private readonly informer: Informer<ResourceClaim>;
  readonly mergePatch: ResourceClient<ResourceClaim>['mergePatch'];

  constructor(private readonly opts: ClaimCacheOptions) {
    this.informer = new Informer<ResourceClaim>({
      client: opts.client,
      signal: opts.signal,
      logger: opts.log.child({ informer: 'ResourceClaim' }),
      transform: keepOnlyOurs(opts.driver, opts.nodeName),
    });
    this.mergePatch = (ref, patch, options) => opts.client.mergePatch(ref, patch, options);
  }

  /** Start listing and watching; reads fall back to GETs until the first list is in. */
  start(): void {
    this.informer.start();
  }

  /** Resolves after the first complete list. */
  get synced(): Promise<void> {
    return this.informer.synced;
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  /**
   * Follow the claims allocated here: `allocated` for each as the cache lists or sees it change,
   * `gone` with the uid of one deleted or no longer allocated here.
   */
  onAllocated(allocated: (claim: ResourceClaim) => void, gone: (uid: string) => void): void {
    const seen = (claim: ResourceClaim): void => {
      if (allocatedHere(claim, this.opts.driver, this.opts.nodeName)) allocated(claim);
      else if (claim.metadata.uid) gone(claim.metadata.uid);
    };
    this.informer.on('add', seen);
    this.informer.on('update', seen);
    this.informer.on('delete', (claim) => {
      if (claim.metadata.uid) gone(claim.metadata.uid);
    });
  }

  /** Whether a read of this claim is served from the cache now. */
  holds(ref: ClaimRef): boolean {
    const cached = this.informer.store.get(`${ref.namespace}/${ref.name}`);
    return cached !== undefined && cached.metadata.uid === ref.uid && allocatedHere(cached, this.opts.driver, this.opts.nodeName);
  }

  async read(ref: ClaimRef): Promise<ResourceClaim> {
    const cached = this.informer.store.get(`${ref.namespace}/${ref.name}`);
    if (cached !== undefined && this.holds(ref)) {
      this.opts.reads?.inc({ source: 'cache' });
      return cached;
    }
    this.opts.reads?.inc({ source: 'apiserver' });
    return this.opts.client.get({ namespace: ref.namespace, name: ref.name });
  }
}
