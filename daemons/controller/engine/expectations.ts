/**
 * What this process did and has not yet seen in its caches (client-go's "expectations"): a lease
 * created for an address, a restart requested for an instance. Entries expire, so a lost watch event
 * cannot block a key forever.
 */
export class Expectations<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  set(key: string, value: V): void {
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until < this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
