/**
 * A watch stream transformed event by event: the apiserver writes one JSON event per line; each
 * complete line is rewritten (or passed as it is when it holds nothing to rewrite) and pushed at once,
 * so nothing waits for more than its own event. A partial line at the end of the input (the upstream
 * broke mid-event) is dropped and reported, never sent.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { rewriteWatchEvent } from './document.js';
import type { BodyMode } from './endpoint.js';
import type { Direction, Renamer } from './names.js';

const NEWLINE = 0x0a;

export interface WatchTransformOptions {
  readonly mode: BodyMode;
  readonly direction: Direction;
  readonly hintKind?: string | undefined;
  /** A line that was not JSON (passed through as it is). */
  onInvalidLine?: (line: Buffer, err: unknown) => void;
  /** The input ended inside an event (its bytes are dropped). */
  onTruncated?: (bytes: number) => void;
  /** Each event passed (rewritten or not). */
  onEvent?: (rewritten: boolean) => void;
}

export class WatchTransform extends Transform {
  private pending: Buffer | undefined;

  constructor(
    private readonly renamer: Renamer,
    private readonly options: WatchTransformOptions,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const data = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = undefined;
    let start = 0;
    let nl = data.indexOf(NEWLINE, start);
    if (nl === -1) {
      this.pending = data;
      callback();
      return;
    }
    const out: Buffer[] = [];
    while (nl !== -1) {
      out.push(this.line(data.subarray(start, nl + 1)));
      start = nl + 1;
      nl = data.indexOf(NEWLINE, start);
    }
    if (start < data.length) this.pending = Buffer.from(data.subarray(start));
    callback(null, out.length === 1 ? out[0] : Buffer.concat(out));
  }

  override _flush(callback: TransformCallback): void {
    if (this.pending !== undefined && this.pending.length > 0) {
      // A last event without its newline is still whole if it parses (some servers omit the final newline).
      const text = this.pending.toString('utf8');
      this.pending = undefined;
      try {
        JSON.parse(text);
        callback(null, this.line(Buffer.from(text + '\n')));
        return;
      } catch {
        this.options.onTruncated?.(text.length);
      }
    }
    callback();
  }

  /** One line with its newline: rewritten, or the same bytes. */
  private line(line: Buffer): Buffer {
    const { mode } = this.options;
    if (mode === 'pass' || (mode === 'inspect' && !this.renamer.markers.some((m) => line.includes(m)))) {
      this.options.onEvent?.(false);
      return line;
    }
    try {
      const event: unknown = JSON.parse(line.toString('utf8'));
      const rewritten = rewriteWatchEvent(this.renamer, event, this.options.direction, this.options.hintKind);
      this.options.onEvent?.(true);
      return Buffer.from(JSON.stringify(rewritten) + '\n');
    } catch (err: unknown) {
      this.options.onInvalidLine?.(line, err);
      return line;
    }
  }
}
