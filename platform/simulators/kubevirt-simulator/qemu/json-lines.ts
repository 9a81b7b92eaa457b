/**
 * A JSON-lines client on a unix socket: QMP and the QEMU guest agent both send one JSON object per
 * line. Commands are answered in order (a line that comes before anyone waits is kept for the next
 * wait); QMP's asynchronous `event` lines go to `onEvent`.
 */
import { createConnection, type Socket } from 'node:net';

export class JsonLinesError extends Error {
  readonly code = 'GUEST_CHANNEL';
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

export class JsonLinesClient {
  private buffer = '';
  private readonly pending: Pending[] = [];
  /** Lines that came before anyone waited for them (QMP's greeting, an agent's late answers). */
  private readonly unclaimed: unknown[] = [];
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    private readonly what: string,
    private readonly onEvent: (event: Record<string, unknown>) => void,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.data(chunk));
    socket.on('error', () => this.fail(`${what}: connection error`));
    socket.on('close', () => this.fail(`${what}: connection closed`));
  }

  static async connect(path: string, what: string, onEvent: (event: Record<string, unknown>) => void = () => {}): Promise<JsonLinesClient> {
    const socket = createConnection(path);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', (err) => reject(new JsonLinesError(`${what}: cannot connect to ${path}`, { cause: err })));
    });
    return new JsonLinesClient(socket, what, onEvent);
  }

  /** Wait for the next line that is not an event (QMP's greeting). */
  async next(timeoutMs: number): Promise<unknown> {
    return this.expect(timeoutMs);
  }

  /** Send `{"execute": command, "arguments": args}` and resolve with `return`; an `error` answer rejects naming it. */
  async execute(command: string, args: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown> {
    const answer = this.expect(timeoutMs);
    this.socket.write(`${JSON.stringify(args === undefined ? { execute: command } : { execute: command, arguments: args })}\n`);
    const value = (await answer) as { return?: unknown; error?: { class?: string; desc?: string } };
    if (value.error !== undefined) throw new JsonLinesError(`${this.what}: ${command}: ${value.error.class ?? 'error'}: ${value.error.desc ?? ''}`);
    return value.return;
  }

  close(): void {
    this.socket.destroy();
  }

  private expect(timeoutMs: number): Promise<unknown> {
    if (this.unclaimed.length > 0) return Promise.resolve(this.unclaimed.shift());
    if (this.closed) return Promise.reject(new JsonLinesError(`${this.what}: connection closed`));
    return new Promise((resolve, reject) => {
      const entry: Pending = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = this.pending.indexOf(entry);
          if (i >= 0) this.pending.splice(i, 1);
          reject(new JsonLinesError(`${this.what}: no answer within ${timeoutMs} ms`));
          // The answer may still come; the order would be lost, so this client is done.
          this.close();
        }, timeoutMs),
      };
      this.pending.push(entry);
    });
  }

  private data(chunk: string): void {
    this.buffer += chunk;
    for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (line === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        this.fail(`${this.what}: not JSON: ${line.slice(0, 80)}`);
        return;
      }
      if (typeof value === 'object' && value !== null && 'event' in value) {
        this.onEvent(value);
        continue;
      }
      const p = this.pending.shift();
      if (p === undefined) {
        this.unclaimed.push(value);
        continue;
      }
      clearTimeout(p.timer);
      p.resolve(value);
    }
  }

  private fail(message: string): void {
    this.closed = true;
    for (const p of this.pending.splice(0)) {
      clearTimeout(p.timer);
      p.reject(new JsonLinesError(message));
    }
    this.socket.destroy();
  }
}
