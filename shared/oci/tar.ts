/**
 * The tar framing of image layers: a header for one file (writer) and a streaming reader that walks a
 * layer's entries without buffering file contents. ustar with base-256 sizes beyond 8 GiB (as GNU tar
 * and Go's archive/tar write and read them); pax `path`/`size` records and GNU long names are read.
 */
import { ProtocolError } from '../errors/index.js';

export const BLOCK = 512;

export interface TarFileHeader {
  readonly name: string;
  readonly size: number;
  readonly mode?: number;
  readonly uid?: number;
  readonly gid?: number;
  readonly mtime?: number;
  /** '0' regular file, '5' directory */
  readonly type?: '0' | '5';
}

function writeOctal(block: Buffer, offset: number, width: number, value: number): void {
  block.write(value.toString(8).padStart(width - 1, '0') + '\0', offset, width, 'ascii');
}

/** One 512-byte ustar header. Sizes of 8 GiB and more use the base-256 form. */
export function tarHeader(h: TarFileHeader): Buffer {
  const block = Buffer.alloc(BLOCK);
  if (Buffer.byteLength(h.name) > 100) throw new RangeError(`tar entry name longer than 100 bytes: ${h.name}`);
  block.write(h.name, 0, 100, 'utf8');
  writeOctal(block, 100, 8, h.mode ?? 0o644);
  writeOctal(block, 108, 8, h.uid ?? 0);
  writeOctal(block, 116, 8, h.gid ?? 0);
  if (h.size < 8 ** 11) writeOctal(block, 124, 12, h.size);
  else {
    block[124] = 0x80;
    let v = BigInt(h.size);
    for (let i = 135; i > 124; i--) {
      block[i] = Number(v & 0xffn);
      v >>= 8n;
    }
  }
  writeOctal(block, 136, 12, h.mtime ?? 0);
  block.write(' '.repeat(8), 148, 8, 'ascii');
  block.write(h.type ?? '0', 156, 1, 'ascii');
  block.write('ustar\0', 257, 6, 'ascii');
  block.write('00', 263, 2, 'ascii');
  let sum = 0;
  for (const b of block) sum += b;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return block;
}

/** Zero bytes that pad `size` bytes of content to a whole block. */
export function tarPadding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The two zero blocks that end an archive. */
export const TAR_END: Buffer = Buffer.alloc(2 * BLOCK);

function readString(block: Buffer, offset: number, width: number): string {
  const raw = block.subarray(offset, offset + width);
  const nul = raw.indexOf(0);
  return raw.subarray(0, nul < 0 ? width : nul).toString('utf8');
}

function readNumber(block: Buffer, offset: number, width: number): number {
  if (((block[offset] ?? 0) & 0x80) !== 0) {
    let v = BigInt((block[offset] ?? 0) & 0x7f);
    for (let i = offset + 1; i < offset + width; i++) v = (v << 8n) | BigInt(block[i] ?? 0);
    return Number(v);
  }
  const text = readString(block, offset, width).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new ProtocolError(`tar header: ${JSON.stringify(text)} is not an octal number`);
  return parseInt(text, 8);
}

export interface TarEntry {
  readonly name: string;
  readonly size: number;
  readonly type: string;
  /** The content; must be consumed (or skipped with `for await` to the end) before the next entry. */
  readonly body: AsyncIterable<Buffer>;
}

/** Pulls exact byte counts out of an async chunk stream. */
class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private done = false;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<void> {
    while (this.length < n && !this.done) {
      const next = await this.source.next();
      if (next.done === true) this.done = true;
      else {
        this.buffered.push(next.value);
        this.length += next.value.length;
      }
    }
  }

  /** Exactly n bytes, or fewer at the end of the stream. */
  async read(n: number): Promise<Buffer> {
    await this.fill(n);
    const all = this.buffered.length === 1 ? this.buffered[0] : Buffer.concat(this.buffered);
    const out = all.subarray(0, Math.min(n, all.length));
    const rest = all.subarray(out.length);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.length = rest.length;
    return out;
  }

  /** n bytes as a sequence of chunks (no concatenation of large data). */
  async *chunks(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.length === 0) await this.fill(1);
      const head = this.buffered.shift();
      if (head === undefined) throw new ProtocolError(`tar: the archive ends ${left} bytes into a file`);
      this.length -= head.length;
      if (head.length > left) {
        this.buffered.unshift(head.subarray(left));
        this.length += head.length - left;
        yield head.subarray(0, left);
        left = 0;
      } else {
        left -= head.length;
        yield head;
      }
    }
  }
}

function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    if (space < 0) break;
    const len = Number(data.subarray(pos, space).toString('ascii'));
    if (!Number.isInteger(len) || len <= 0) throw new ProtocolError('tar: malformed pax record');
    const record = data.subarray(space + 1, pos + len - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    pos += len;
  }
  return out;
}

/** Walk the entries of a tar stream; each entry's body must be consumed before asking for the next. */
export async function* tarEntries(source: AsyncIterable<Buffer>): AsyncGenerator<TarEntry> {
  const reader = new ByteReader(source[Symbol.asyncIterator]());
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  for (;;) {
    const block = await reader.read(BLOCK);
    if (block.length === 0) return;
    if (block.length < BLOCK) throw new ProtocolError('tar: the archive ends inside a header');
    if (block.every((b) => b === 0)) return;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
    if (sum !== readNumber(block, 148, 8)) throw new ProtocolError('tar: header checksum mismatch (not a tar archive?)');
    const type = readString(block, 156, 1) || '0';
    let size = readNumber(block, 124, 12);
    const prefix = readString(block, 257, 6) === 'ustar' ? readString(block, 345, 155) : '';
    let name = prefix !== '' ? `${prefix}/${readString(block, 0, 100)}` : readString(block, 0, 100);
    if (type === 'x' || type === 'L') {
      const data = await reader.read(size);
      await reader.read((BLOCK - (size % BLOCK)) % BLOCK);
      if (type === 'x') pax = parsePax(data);
      else longName = data.toString('utf8').replace(/\0+$/, '');
      continue;
    }
    if (pax['path'] !== undefined) name = pax['path'];
    if (longName !== undefined) name = longName;
    if (pax['size'] !== undefined) size = Number(pax['size']);
    pax = {};
    longName = undefined;
    let consumed = false;
    const body = (async function* (): AsyncGenerator<Buffer> {
      consumed = true;
      yield* reader.chunks(size);
    })();
    yield { name: name.replace(/^\.\//, ''), size, type, body };
    if (!consumed) for await (const chunk of reader.chunks(size)) void chunk;
    await reader.read((BLOCK - (size % BLOCK)) % BLOCK);
  }
}
