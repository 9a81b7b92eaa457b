/**
 * Keeps the node's ResourceSlices equal to the devices found: server-side apply of every slice of the
 * pool (a new generation whenever the content changes), deletion of slices the pool no longer needs,
 * and removal of all of them on shutdown. Slices are owned by the Node, so the garbage collector
 * removes them with it.
 */
import { NotFoundError } from '../../shared/errors/index.js';
import type { OwnerReference } from '../../shared/api/k8s/core.js';
import type { ResourcePort } from '../../shared/kube/index.js';
import type { Logger } from '../../shared/log/index.js';
import { buildSlices, poolFingerprint } from './devices.js';
import type { Node, ResourceSlice, SliceDevice } from './kube.js';

export interface PublisherOptions {
  slices: Pick<ResourcePort<ResourceSlice>, 'list' | 'apply' | 'delete'>;
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
    for (const slice of this.desired) await this.opts.slices.apply(slice, { force: true, signal: opts.signal });
    const wanted = new Set(this.desired.map((s) => s.metadata.name));
    await this.deleteAll(existing.filter((s) => !wanted.has(s.metadata.name ?? '')), opts.signal);
    this.fingerprint = fingerprint;
    if (changed) this.opts.log.info({ generation: this.generation, devices: devices.length, slices: this.desired.length }, 'ResourceSlices published');
    return { changed, generation: this.generation, slices: this.desired.length };
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
