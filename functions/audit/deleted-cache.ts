/**
 * Recently deleted objects, kept for a short while: audit lines for a delete arrive after the object
 * has left the informer, and enrichment must still find it. Each resource has its own key space
 * (`<resource>/<namespace>/<name>`), so an object is always found under the key it was stored with.
 */

export interface DeletedCacheOptions {
  /** How long a deleted object is kept, in milliseconds (the original keeps 3 minutes). */
  readonly ttlMs: number;
  /** Most objects kept; the oldest go first. */
  readonly capacity: number;
  readonly now?: () => number;
}

export class DeletedCache {
  private readonly entries = new Map<string, { at: number; obj: unknown }>();
  private readonly now: () => number;

  constructor(private readonly options: DeletedCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  static key(resource: string, namespace: string | undefined, name: string): string {
    return `${resource}/${namespace ?? ''}/${name}`;
  }

  put(resource: string, namespace: string | undefined, name: string, obj: unknown): void {
    const key = DeletedCache.key(resource, namespace, name);
    const now = this.now();
    this.entries.delete(key);
    this.entries.set(key, { at: now, obj });
    this.sweep(now);
  }

  get<T>(resource: string, namespace: string | undefined, name: string): T | undefined {
    const key = DeletedCache.key(resource, namespace, name);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() - entry.at >= this.options.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.obj as T;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Entries are in insertion order: the expired and the excess are at the front. */
  private sweep(now: number): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.options.capacity && now - entry.at < this.options.ttlMs) break;
      this.entries.delete(key);
    }
  }
}
