/**
 * Suppresses an audit event seen before. The apiserver emits one event per (auditID, stage); the same
 * pair arriving twice is a delivery duplicate (several log-shipper filters, sender retries) and must
 * not produce a second record. Bounded in size and age.
 *
 * The cost of a call does not depend on how full the filter is. Keys sit in a ring in recording order
 * (with their hash and time), so forgetting the oldest is one step at the ring's head, and in an
 * open-addressing hash table sized once for the capacity (linear probing, load at most 1/2, deletion
 * by backward shift, so no tombstones). Measured on this machine, a JS `Map` used as the FIFO got
 * 20-100x slower per call once full (V8 leaves deleted entries as holes that every walk from the front
 * crosses again), and even a ring beside a `Set` stayed 3-5x slower full than empty (the set's holes,
 * rehashing, and reading each evicted string to rehash it); the fixed table keeps it within 2x.
 */

export interface DuplicateFilterOptions {
  /** How long a key is remembered, in milliseconds. */
  readonly ttlMs: number;
  /** Most keys remembered; the oldest are forgotten first. */
  readonly capacity: number;
  readonly now?: () => number;
}

/** A table slot whose hash is this is free; no key hashes to it. */
const FREE = 0;

/** 32-bit FNV-1a over the UTF-16 code units of `key`, never FREE. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h === FREE ? 1 : h | 0;
}

export class DuplicateFilter {
  private readonly ttlMs: number;
  private readonly capacity: number;
  private readonly now: () => number;
  /**
   * The hash table: a hash (FREE = free slot) and its key per slot; size a power of two. Probing reads
   * only the dense hash array; a key is read when its hash matches.
   */
  private readonly slotKeys: Array<string | undefined>;
  private readonly slotHashes: Int32Array;
  private readonly mask: number;
  /** The ring: keys in recording order with their hashes and times. */
  private readonly ringKeys: Array<string | undefined>;
  private readonly ringHashes: Int32Array;
  private readonly ringAt: Float64Array;
  /** Index of the oldest ring slot and the number of keys remembered. */
  private head = 0;
  private used = 0;

  constructor(options: DuplicateFilterOptions) {
    this.ttlMs = options.ttlMs;
    this.capacity = Math.max(1, Math.floor(options.capacity));
    this.now = options.now ?? Date.now;
    let slots = 2;
    while (slots < this.capacity * 2) slots *= 2;
    this.mask = slots - 1;
    this.slotKeys = new Array<string | undefined>(slots).fill(undefined);
    this.slotHashes = new Int32Array(slots);
    this.ringKeys = new Array<string | undefined>(this.capacity).fill(undefined);
    this.ringHashes = new Int32Array(this.capacity);
    this.ringAt = new Float64Array(this.capacity);
  }

  /** True when (auditID, stage) was already seen within the window; records it otherwise. */
  isDuplicate(auditID: string, stage: string): boolean {
    const key = `${auditID}\u0000${stage}`;
    const hash = hashOf(key);
    const now = this.now();
    // Everything still in the table is inside the window once the expired head is gone.
    while (this.used > 0 && now - this.ringAt[this.head] >= this.ttlMs) this.dropOldest();
    let slot = this.find(key, hash);
    if (slot >= 0) return true;
    if (this.used === this.capacity) {
      this.dropOldest();
      slot = this.find(key, hash);
    }
    const free = -1 - slot;
    this.slotKeys[free] = key;
    this.slotHashes[free] = hash;
    const tail = (this.head + this.used) % this.capacity;
    this.ringKeys[tail] = key;
    this.ringHashes[tail] = hash;
    this.ringAt[tail] = now;
    this.used++;
    return false;
  }

  get size(): number {
    return this.used;
  }

  /** The slot holding `key`, or -1 - (the free slot where it would go). */
  private find(key: string, hash: number): number {
    for (let i = hash & this.mask; ; i = (i + 1) & this.mask) {
      const h = this.slotHashes[i];
      if (h === FREE) return -1 - i;
      if (h === hash && this.slotKeys[i] === key) return i;
    }
  }

  /** Forgets the oldest key: frees its slot and moves later keys of its probe run back into the gap. */
  private dropOldest(): void {
    const key = this.ringKeys[this.head]!;
    let gap = this.find(key, this.ringHashes[this.head]);
    this.ringKeys[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.used--;
    for (let j = (gap + 1) & this.mask; this.slotHashes[j] !== FREE; j = (j + 1) & this.mask) {
      const home = this.slotHashes[j] & this.mask;
      // The key at j may move to the gap when the gap lies on its probe path from home to j.
      if (((j - home) & this.mask) >= ((j - gap) & this.mask)) {
        this.slotKeys[gap] = this.slotKeys[j];
        this.slotHashes[gap] = this.slotHashes[j]!;
        gap = j;
      }
    }
    this.slotKeys[gap] = undefined;
    this.slotHashes[gap] = FREE;
  }
}
