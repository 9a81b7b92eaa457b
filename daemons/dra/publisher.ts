/**
 * Keeps the node's ResourceSlices equal to the devices found: every slice of the pool created, or
 * server-side applied when it exists (a new generation whenever the content changes), deletion of slices the pool no longer needs,
 * and removal of all of them on shutdown. Slices are owned by the Node, so the garbage collector
 * removes them with it.
 */
import { AlreadyExistsError, NotFoundError } from '../../shared/errors/index.js';
import type { OwnerReference } from '../../shared/api/k8s/core.js';
import type { ResourcePort } from '../../shared/kube/index.js';
import type { Logger } from '../../shared/log/index.js';
import { buildSlices, poolFingerprint } from './devices.js';
import type { Node, ResourceSlice, SliceDevice } from '../../shared/api/k8s/resource.js';

export interface PublisherOptions {
  slices: Pick<ResourcePort<ResourceSlice>, 'list' | 'create' | 'apply' | 'delete'>;
  nodes: Pick<ResourcePort<Node>, 'get'>;
  driver: string;
  nodeName: string;
  log: Logger;
}

export interface PublishResult {
  /** False when the content was unchanged and nothing was written. */
  changed: boolean;
  generation: number;
  slices: number;
}

export class SlicePublisher {
  private generation = 0;
  private fingerprint: string | undefined;
  private desired: ResourceSlice[] = [];
  private owner: OwnerReference | undefined;
  private ownerLooked = false;

  constructor(private readonly opts: PublisherOptions) {}

  /** `spec.driver=<driver>,spec.nodeName=<node>`: this node's slices of this driver. */
  get fieldSelector(): string {
    return `spec.driver=${this.opts.driver},spec.nodeName=${this.opts.nodeName}`;
  }

  /** The slices of the pool as the apiserver has them now. */
  async current(signal?: AbortSignal): Promise<ResourceSlice[]> {
    return (await this.opts.slices.list({ fieldSelector: this.fieldSelector, signal })).items;
  }

  /**
   * Publish the devices. Unchanged content writes nothing unless `force` (the periodic resync, which
   * repairs slices deleted or edited by someone else without a new generation).
   */
  async publish(devices: readonly SliceDevice[], opts: { force?: boolean; signal?: AbortSignal } = {}): Promise<PublishResult> {
    const fingerprint = poolFingerprint(devices);
    const changed = fingerprint !== this.fingerprint;
    if (!changed && !opts.force) return { changed: false, generation: this.generation, slices: this.desired.length };
    const existing = await this.current(opts.signal);
    if (changed) {
      // Consumers use only the highest generation of a pool: always move past what is stored.
      const stored = Math.max(0, ...existing.map((s) => s.spec.pool.generation));
      this.generation = Math.max(this.generation, stored) + 1;
      await this.lookUpOwner(opts.signal);
      this.desired = buildSlices({ driver: this.opts.driver, nodeName: this.opts.nodeName, generation: this.generation, devices, owner: this.owner });
    }
    const stored = new Set(existing.map((s) => s.metadata.name));
    for (const slice of this.desired) await this.write(slice, stored.has(slice.metadata.name), opts.signal);
    const wanted = new Set(this.desired.map((s) => s.metadata.name));
    await this.deleteAll(
      existing.filter((s) => !wanted.has(s.metadata.name ?? '')),
      opts.signal,
    );
    this.fingerprint = fingerprint;
    if (changed) this.opts.log.info({ generation: this.generation, devices: devices.length, slices: this.desired.length }, 'ResourceSlices published');
    return { changed, generation: this.generation, slices: this.desired.length };
  }

  /** A new slice is created (the apiserver asks for create rights anyway), a stored one applied. */
  private async write(slice: ResourceSlice, stored: boolean, signal?: AbortSignal): Promise<void> {
    if (!stored) {
      try {
        await this.opts.slices.create(slice, { signal });
        return;
      } catch (err: unknown) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
    }
    await this.opts.slices.apply(slice, { force: true, signal });
  }

  /** Delete every slice of this node and driver (shutdown). */
  async removeAll(signal?: AbortSignal): Promise<number> {
    const existing = await this.current(signal);
    await this.deleteAll(existing, signal);
    this.fingerprint = undefined;
    this.desired = [];
    return existing.length;
  }

  private async deleteAll(slices: readonly ResourceSlice[], signal?: AbortSignal): Promise<void> {
    for (const s of slices) {
      try {
        await this.opts.slices.delete({ name: s.metadata.name ?? '' }, { signal });
      } catch (err: unknown) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
  }

  /** The Node as owner (once found); slices without an owner still publish. */
  private async lookUpOwner(signal?: AbortSignal): Promise<void> {
    if (this.owner !== undefined) return;
    try {
      const node = await this.opts.nodes.get({ name: this.opts.nodeName }, { signal });
      if (node.metadata.uid) this.owner = { apiVersion: 'v1', kind: 'Node', name: this.opts.nodeName, uid: node.metadata.uid, controller: true };
    } catch (err: unknown) {
      if (!(err instanceof NotFoundError)) throw err;
      if (!this.ownerLooked) this.opts.log.warn({ node: this.opts.nodeName }, 'Node not found: ResourceSlices are published without an owner');
    }
    this.ownerLooked = true;
  }
}
