/**
 * Suppresses an audit event seen before. The apiserver emits one event per (auditID, stage); the same
 * pair arriving twice is a delivery duplicate (several log-shipper filters, sender retries) and must
 * not produce a second record. Bounded in size and age.
 */

export interface DuplicateFilterOptions {
  /** How long a key is remembered, in milliseconds. */
  readonly ttlMs: number;
  /** Most keys remembered; the oldest are forgotten first. */
  readonly capacity: number;
  readonly now?: () => number;
}

export class DuplicateFilter {
  private readonly seen = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly capacity: number;
  private readonly now: () => number;

  constructor(options: DuplicateFilterOptions) {
    this.ttlMs = options.ttlMs;
    this.capacity = Math.max(1, options.capacity);
    this.now = options.now ?? Date.now;
  }

  /** True when (auditID, stage) was already seen within the window; records it otherwise. */
  isDuplicate(auditID: string, stage: string): boolean {
    const key = `${auditID}\u0000${stage}`;
    const now = this.now();
    const at = this.seen.get(key);
    if (at !== undefined && now - at < this.ttlMs) return true;
    this.seen.delete(key);
    this.seen.set(key, now);
    this.evict(now);
    return false;
  }

  get size(): number {
    return this.seen.size;
  }

  /** Keys are in insertion order, so the expired and the excess are at the front. */
  private evict(now: number): void {
    for (const [key, at] of this.seen) {
      if (this.seen.size <= this.capacity && now - at < this.ttlMs) break;
      this.seen.delete(key);
    }
  }
}
