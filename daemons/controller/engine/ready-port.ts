/**
 * A dependency that is ready only after start (the USB reconcilers' caches sync on their own time):
 * the reconcilers get this port when the controller is built, and it fills once. Nothing assigns a
 * field of the shared dependencies later; a reader asks the port and skips its part while it is empty.
 */
export class ReadyPort<T> {
  private value: T | undefined;
  private readonly waiting: ((value: T) => void)[] = [];

  /** A port already holding `value` (unit tests, or a dependency ready at once). */
  static of<T>(value: T): ReadyPort<T> {
    const port = new ReadyPort<T>();
    port.set(value);
    return port;
  }

  /** The dependency once ready, else undefined. */
  get(): T | undefined {
    return this.value;
  }

  /** Fill the port (once: a second value is refused) and tell whoever waits. */
  set(value: T): void {
    if (this.value !== undefined) throw new Error('ReadyPort: already set');
    this.value = value;
    for (const fn of this.waiting.splice(0)) fn(value);
  }

  /** Call `fn` when the port fills (at once when it is full already). */
  onReady(fn: (value: T) => void): void {
    if (this.value !== undefined) fn(this.value);
    else this.waiting.push(fn);
  }
}
