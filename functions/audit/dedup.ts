/**
 * Suppresses an audit event seen before. The apiserver emits one event per (auditID, stage); the same
 * pair arriving twice is a delivery duplicate (several log-shipper filters, sender retries) and must
 * not produce a second record. Bounded in size and age.
 *
 * The cost of a call does not depend on how full the filter is. Keys sit in a ring in recording order
 * (with their time), so forgetting the oldest is one step at the ring's head, and in an
 * open-addressing hash table sized once for the capacity (linear probing, load at most 1/2, deletion
 * by backward shift, so no tombstones). Measured on this machine, a JS `Map` used as the FIFO got
 * 20-100x slower per call once full (V8 leaves deleted entries as holes that every walk from the front
 * crosses again), and even a ring beside a `Set` stayed 3-5x slower full than empty (the set's holes,
 * rehashing, and reading each evicted string to rehash it); the fixed table keeps it within 2x.
 *
 * A key (`<auditID length>:<auditID><stage>`) is kept as its 128-bit digest (MurmurHash3 x86_128 of
 * its UTF-16 code units, so distinct strings never meet in an encoding first), four
 * 32-bit words in the ring (the hash table's slots hold only ring indices), not as a string: 100,000
 * keys are ~3.4 MB of typed arrays allocated once (1 MB of slots, 1.6 MB of digests, 0.8 MB of times;
 * ~6.4 MB while the slots held whole digests) instead of ~16 MB of heap (100,000 strings the garbage
 * collector would visit on every major GC).
 * Two distinct keys share a digest with probability about n²/2¹²⁹ (below 10⁻²⁸ for 100,000 keys), so
 * no record is lost to a collision in practice. The hash is not cryptographic: someone who chooses
 * auditIDs (the apiserver takes them from the `Audit-ID` request header) could craft a colliding one,
 * but would have to know the other request's auditID in advance, and with it could already send that
 * very auditID; the digest gives no power the key itself does not (docs/adr/0016).
 */

export interface DuplicateFilterOptions {
  /** How long a key is remembered, in milliseconds. */
  readonly ttlMs: number;
  /** Most keys remembered; the oldest are forgotten first. */
  readonly capacity: number;
  readonly now?: () => number;
}

/** Words of a digest. */
const WORDS = 4;

/** A free table slot (slots hold 1 + a ring index). */
const FREE = 0;

const C1 = 0x239b961b;
const C2 = 0xab0e9789;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** One code-unit pair of `key` from index i as a little-endian word (0 past the end). */
function wordAt(key: string, i: number): number {
  return key.charCodeAt(i) | 0 | ((key.charCodeAt(i + 1) | 0) << 16);
}

/**
 * MurmurHash3 x86_128 (seed 0) of the UTF-16LE bytes of `key`, written into `out[0..3]`; the first
 * word is never 0 (1 stands for 0 there, as when slots held digests; the test vectors keep it). `charCodeAt` past the end is NaN, which `| 0` makes 0:
 * the zero padding of MurmurHash3's tail.
 */
export function digestInto(key: string, out: Int32Array): void {
  const units = key.length;
  let h1 = 0;
  let h2 = 0;
  let h3 = 0;
  let h4 = 0;
  const whole = units - (units % 8);
  for (let i = 0; i < whole; i += 8) {
    h1 ^= Math.imul(rotl(Math.imul(wordAt(key, i), C1), 15), C2);
    h1 = (Math.imul(rotl(h1, 19) + h2, 5) + 0x561ccd1b) | 0;
    h2 ^= Math.imul(rotl(Math.imul(wordAt(key, i + 2), C2), 16), C3);
    h2 = (Math.imul(rotl(h2, 17) + h3, 5) + 0x0bcaa747) | 0;
    h3 ^= Math.imul(rotl(Math.imul(wordAt(key, i + 4), C3), 17), C4);
    h3 = (Math.imul(rotl(h3, 15) + h4, 5) + 0x96cd1c35) | 0;
    h4 ^= Math.imul(rotl(Math.imul(wordAt(key, i + 6), C4), 18), C1);
    h4 = (Math.imul(rotl(h4, 13) + h1, 5) + 0x32ac3b17) | 0;
  }
  // The tail: the 1-7 code units after the last whole block of 8, in up to 4 (zero-padded) words.
  const rest = units - whole;
  if (rest > 6) h4 ^= Math.imul(rotl(Math.imul(wordAt(key, whole + 6), C4), 18), C1);
  if (rest > 4) h3 ^= Math.imul(rotl(Math.imul(wordAt(key, whole + 4), C3), 17), C4);
  if (rest > 2) h2 ^= Math.imul(rotl(Math.imul(wordAt(key, whole + 2), C2), 16), C3);
  if (rest > 0) h1 ^= Math.imul(rotl(Math.imul(wordAt(key, whole), C1), 15), C2);
  const bytes = 2 * units;
  h1 ^= bytes;
  h2 ^= bytes;
  h3 ^= bytes;
  h4 ^= bytes;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h3 = fmix(h3);
  h4 = fmix(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  out[0] = h1 === FREE ? 1 : h1;
  out[1] = (h2 + h1) | 0;
  out[2] = (h3 + h1) | 0;
  out[3] = (h4 + h1) | 0;
}

export class DuplicateFilter {
  private readonly ttlMs: number;
  private readonly capacity: number;
  private readonly now: () => number;
  /**
   * The hash table: per slot, 1 + the ring index of the key it holds (0 = free); slots a power of two.
   * The digest itself lives only in the ring, so a slot is one word, not four.
   */
  private readonly slots: Int32Array;
  private readonly mask: number;
  /** The ring: digests in recording order with their times. */
  private readonly ring: Int32Array;
  private readonly ringAt: Float64Array;
  /** Index of the oldest ring slot and the number of keys remembered. */
  private head = 0;
  private used = 0;
  /** The digest being looked up (no allocation per call). */
  private readonly key = new Int32Array(WORDS);

  constructor(options: DuplicateFilterOptions) {
    this.ttlMs = options.ttlMs;
    this.capacity = Math.max(1, Math.floor(options.capacity));
    this.now = options.now ?? Date.now;
    let slots = 2;
    while (slots < this.capacity * 2) slots *= 2;
    this.mask = slots - 1;
    this.slots = new Int32Array(slots);
    this.ring = new Int32Array(this.capacity * WORDS);
    this.ringAt = new Float64Array(this.capacity);
  }

  /** True when (auditID, stage) was already seen within the window; records it otherwise. */
  isDuplicate(auditID: string, stage: string): boolean {
    const key = this.key;
    // The decimal length first keeps the pair apart from every other pair with the same concatenation.
    digestInto(`${auditID.length}:${auditID}${stage}`, key);
    const now = this.now();
    // Everything still in the table is inside the window once the expired head is gone.
    while (this.used > 0 && now - this.ringAt[this.head] >= this.ttlMs) this.dropOldest();
    let slot = this.find(key, 0);
    if (slot >= 0) return true;
    if (this.used === this.capacity) {
      this.dropOldest();
      slot = this.find(key, 0);
    }
    const tail = (this.head + this.used) % this.capacity;
    for (let w = 0; w < WORDS; w++) this.ring[tail * WORDS + w] = key[w];
    this.slots[-1 - slot] = tail + 1;
    this.ringAt[tail] = now;
    this.used++;
    return false;
  }

  get size(): number {
    return this.used;
  }

  /** The first digest word of the key in table slot `i` (its home is that word & mask). */
  private firstWord(i: number): number {
    return this.ring[(this.slots[i] - 1) * WORDS];
  }

  /** The slot holding the digest at `from` in `words`, or -1 - (the free slot where it would go). */
  private find(words: Int32Array, from: number): number {
    const s = this.slots;
    const r = this.ring;
    const first = words[from];
    for (let i = first & this.mask; ; i = (i + 1) & this.mask) {
      const held = s[i];
      if (held === FREE) return -1 - i;
      const at = (held - 1) * WORDS;
      if (r[at] === first && r[at + 1] === words[from + 1] && r[at + 2] === words[from + 2] && r[at + 3] === words[from + 3]) return i;
    }
  }

  /** Forgets the oldest key: frees its slot and moves later keys of its probe run back into the gap. */
  private dropOldest(): void {
    const s = this.slots;
    let gap = this.find(this.ring, this.head * WORDS);
    this.head = (this.head + 1) % this.capacity;
    this.used--;
    for (let j = (gap + 1) & this.mask; s[j] !== FREE; j = (j + 1) & this.mask) {
      const home = this.firstWord(j) & this.mask;
      // The key at j may move to the gap when the gap lies on its probe path from home to j.
      if (((j - home) & this.mask) >= ((j - gap) & this.mask)) {
        s[gap] = s[j];
        gap = j;
      }
    }
    s[gap] = FREE;
  }
}
