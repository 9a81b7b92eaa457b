/**
 * A list answer restored item by item from its bytes, so that the proxy never holds a whole parsed
 * list (for 1,000 VirtualMachines tens of MB of heap, kept by V8 long after) next to its text and the
 * output string: the bytes are scanned for the list's own fields and each item's range, each item is
 * parsed, restored and serialized alone, and the output is Buffers of about 64 KiB. One scanner,
 * ListRestoreStream, serves answers as they arrive and (restoreListBody) answers read whole.
 *
 * The result holds the same fields and values as `JSON.stringify(restoreDocument(JSON.parse(raw)))`,
 * with `items` first.
 */
import type { RequestPlan } from './endpoint.js';
import { isRecord, type Renamer } from './names.js';
import { rewriteObject } from './objects.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ITEMS = Buffer.from('items');

/** The index of the quote closing the string opened at `open`, or -1 when it never closes. */
function stringEnd(raw: Buffer, open: number): number {
  let i = open;
  for (;;) {
    i = raw.indexOf(QUOTE, i + 1);
    if (i === -1) return -1;
    let slashes = 0;
    for (let j = i - 1; raw[j] === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return i;
  }
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Discovery documents that end in `List`: restored by their own rules (restoreDocument), never here. */
const NOT_LISTS = new Set(['APIGroupList', 'APIResourceList', 'APIGroupDiscoveryList']);

/** Output is cut into Buffers of about this many characters. */
const PIECE = 64 * 1024;

/**
 * A list answer (`kind: ...List` with `items`) read whole, restored item by item (ListRestoreStream),
 * as Buffers to send in order; undefined when the body is not such a list or not JSON: the caller then
 * parses and restores the document whole, which decides (a duplicate `items` key, say, is JSON).
 */
export function restoreListBody(r: Renamer, plan: RequestPlan, raw: Buffer): Buffer[] | undefined {
  if (plan.endpoint.kind.startsWith('openapi')) return undefined;
  const pieces: Buffer[] = [];
  const stream = new ListRestoreStream(r, plan, (piece) => pieces.push(piece));
  try {
    if (stream.push(raw) !== 'streaming') return undefined;
    stream.end();
  } catch (err: unknown) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
  return pieces;
}

const RESCAN = Symbol('rescan');

/** What ListRestoreStream.push found so far. */
export type ListStreamState = 'pending' | 'streaming' | 'not-list';

/**
 * A list answer restored while its bytes arrive, for collection GETs: once the top-level `items`
 * array opens, each element is parsed, restored and handed to `emit` as soon as its bytes are
 * complete, and only the bytes of the element being read are kept. Before that (the list's fields
 * before `items`) everything is kept, and `push` answers 'not-list' when the document turns out not
 * to be an object with an `items` array (the caller then takes `received()` and restores it whole).
 *
 * The output holds the same fields and items as the whole-document restore, with `items` first: the
 * list's `apiVersion` is restored together with its `kind`, which the apiserver writes after `items`.
 * Once streaming, a broken document throws SyntaxError (from `push` or `end`): the caller must cut
 * the answer, never finish it. Items without a `kind` that arrive before the list's kind is known
 * (they take the list's item kind as their hint; the apiserver never sends them) are kept raw until
 * the end.
 */
export class ListRestoreStream {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  private depth = 0;
  private phase: 'prefix' | 'items' | 'suffix' | 'done' = 'prefix';
  private key: readonly [number, number] = [0, 0];
  private afterItemsKey = false;
  private elemStart = -1;
  private prefix = '';
  private listKind: string | undefined;
  private held: Buffer[] | undefined;
  private out = '';
  private count = 0;
  private written = 0;

  constructor(
    private readonly r: Renamer,
    private readonly plan: RequestPlan,
    private readonly emit: (piece: Buffer) => void,
  ) {}

  /** Every byte pushed so far; only meaningful while the state is 'pending' or 'not-list'. */
  received(): Buffer {
    return this.buf;
  }

  /** The bytes kept right now (the list's fields, or the element being read): what streaming bounds. */
  get pendingBytes(): number {
    return this.buf.length + (this.held?.reduce((n, b) => n + b.length, 0) ?? 0);
  }

  push(chunk: Buffer): ListStreamState {
    if (this.phase === 'done') {
      for (const c of chunk) if (!isBlank(c)) throw new SyntaxError('the list answer goes on after its end');
      return 'streaming';
    }
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const state = this.scan();
    if (state !== 'not-list' && this.phase !== 'prefix') this.trim();
    this.flush();
    return state;
  }

  /** The upstream answer ended: restore what was held, write the list's own fields. */
  end(): void {
    if (this.phase === 'prefix') throw new SyntaxError('the list answer ended before its items');
    if (this.phase !== 'done') throw new SyntaxError('the list answer ended inside the list');
    const shell: unknown = JSON.parse(`${this.prefix}[]${this.buf.toString('utf8')}`);
    if (!isRecord(shell) || typeof shell.kind !== 'string' || !shell.kind.endsWith('List') || NOT_LISTS.has(shell.kind)) {
      throw new SyntaxError('the answer to a collection GET is not a list');
    }
    const itemKind = shell.kind.slice(0, -'List'.length);
    this.listKind = shell.kind;
    for (const raw of this.held ?? []) this.restoreItem(raw, itemKind);
    this.held = undefined;
    rewriteObject(this.r, shell, 'restore', this.plan.hintKind);
    this.out += ']';
    for (const [k, v] of Object.entries(shell)) if (k !== 'items') this.out += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
    this.out += '}';
    this.flush(true);
  }

  private scan(): ListStreamState {
    const buf = this.buf;
    for (; this.pos < buf.length; this.pos++) {
      const i = this.pos;
      const c = buf[i] ?? 0;
      if (isBlank(c)) continue;
      if (this.depth === 0 && (this.phase !== 'prefix' || c !== 0x7b)) {
        if (this.phase === 'prefix') return 'not-list';
        throw new SyntaxError('the list answer goes on after its end');
      }
      const next = this.token(buf, c, i);
      if (next === RESCAN) return this.scan();
      if (typeof next === 'string') return next;
      this.pos = next;
    }
    return this.phase === 'prefix' ? 'pending' : 'streaming';
  }

  /** Take the structural character `c` at `i`: the index to go on from, a state to stop with, or RESCAN (the buffer changed). */
  private token(buf: Buffer, c: number, i: number): number | ListStreamState | typeof RESCAN {
    switch (c) {
      case QUOTE:
        return this.string(buf, i);
      case 0x3a: // ':'
        if (this.depth === 1) {
          this.afterItemsKey = this.key[1] - this.key[0] === ITEMS.length && ITEMS.equals(buf.subarray(this.key[0], this.key[1]));
          if (this.afterItemsKey && this.phase === 'suffix') throw new SyntaxError('the list has two items fields');
        }
        return i;
      case 0x5b: // '['
      case 0x7b: // '{'
        if (this.depth === 1 && c === 0x5b && this.afterItemsKey && this.phase === 'prefix') return this.open(i) ? RESCAN : 'not-list';
        this.startElement(i);
        if (this.depth === 1) this.afterItemsKey = false;
        this.depth++;
        return i;
      case 0x5d: // ']'
      case 0x7d: // '}'
        return this.close(buf, c, i);
      case 0x2c: // ','
        if (this.phase === 'items' && this.depth === 2) {
          if (this.elemStart < 0) throw new SyntaxError('an empty element in the items array');
          this.element(this.elemStart, i);
          this.elemStart = -1;
        }
        return i;
      default:
        if (this.depth === 1) this.afterItemsKey = false;
        this.startElement(i);
        return i;
    }
  }

  private string(buf: Buffer, i: number): number | ListStreamState {
    const end = stringEnd(buf, i);
    if (end < 0) return this.phase === 'prefix' ? 'pending' : 'streaming';
    if (this.depth === 1) {
      this.key = [i + 1, end];
      this.afterItemsKey = false;
    }
    this.startElement(i);
    return end;
  }

  private close(buf: Buffer, c: number, i: number): number | ListStreamState | typeof RESCAN {
    this.depth--;
    if (this.phase === 'items' && this.depth === 1) {
      if (c !== 0x5d) throw new SyntaxError('the items array is closed by }');
      if (this.elemStart >= 0) this.element(this.elemStart, i);
      else if (this.count > 0) throw new SyntaxError('a comma before the end of the items array');
      this.phase = 'suffix';
      this.buf = buf.subarray(i + 1);
      this.pos = 0;
      return RESCAN;
    }
    if (this.depth < 0) throw new SyntaxError('unbalanced brackets in the list answer');
    if (this.depth === 0) {
      if (this.phase === 'prefix') return 'not-list';
      this.phase = 'done';
    }
    return i;
  }

  /** The items array opens at `i`: the list's fields so far must be an object's start. */
  private open(i: number): boolean {
    const prefix = this.buf.toString('utf8', 0, i);
    let head: unknown;
    try {
      head = JSON.parse(`${prefix}[]}`);
    } catch {
      return false;
    }
    if (!isRecord(head)) return false;
    if (typeof head.kind === 'string') {
      if (!head.kind.endsWith('List') || NOT_LISTS.has(head.kind)) return false;
      this.listKind = head.kind;
    }
    this.prefix = prefix;
    this.phase = 'items';
    this.depth = 2;
    this.out = '{"items":[';
    this.buf = this.buf.subarray(i + 1);
    this.pos = 0;
    return true;
  }

  private startElement(at: number): void {
    if (this.phase === 'items' && this.depth === 2 && this.elemStart < 0) this.elemStart = at;
  }

  /** The element in [s, e) of the buffer is complete. */
  private element(s: number, e: number): void {
    const raw = this.buf.subarray(s, e);
    this.count++;
    if (this.held !== undefined) {
      this.held.push(Buffer.from(raw));
      return;
    }
    const item: unknown = JSON.parse(raw.toString('utf8'));
    if (this.listKind === undefined && isRecord(item) && typeof item.kind !== 'string') {
      this.held = [Buffer.from(raw)];
      return;
    }
    this.write(item, this.listKind === undefined ? '' : this.listKind.slice(0, -'List'.length));
  }

  private restoreItem(raw: Buffer, itemKind: string): void {
    this.write(JSON.parse(raw.toString('utf8')), itemKind);
  }

  private write(item: unknown, itemKind: string): void {
    this.out += (this.written === 0 ? '' : ',') + JSON.stringify(rewriteObject(this.r, item, 'restore', itemKind));
    this.written++;
    if (this.out.length >= PIECE) this.flush(true);
  }

  /** Drop the bytes already taken (keep the element being read). */
  private trim(): void {
    if (this.phase !== 'items') return;
    const cut = this.elemStart >= 0 ? this.elemStart : this.pos;
    if (cut === 0) return;
    this.buf = this.buf.subarray(cut);
    this.pos -= cut;
    if (this.elemStart >= 0) this.elemStart -= cut;
  }

  private flush(always = false): void {
    if (this.out.length === 0 || (!always && this.phase === 'prefix')) return;
    this.emit(Buffer.from(this.out));
    this.out = '';
  }
}
