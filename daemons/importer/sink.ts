/**
 * Receive a source stream into a local file: count and hash the bytes as they arrive (progress and
 * checksums are over the bytes the source sent), gunzip a gzip source on the way, refuse more than
 * the size limit, and leave all-zero blocks as holes (a sparse raw image stays sparse on disk).
 */
import { createHash, type Hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Checksums } from './config.js';
import { ImportError } from './errors.js';
import { DETECT_BYTES } from './format.js';
import type { Progress } from './progress.js';

export interface ReceiveOptions {
  readonly expected: Checksums;
  /** 0: no limit */
  readonly maxSize: number;
  readonly progress: Progress;
  readonly signal?: AbortSignal | undefined;
}

export interface Received {
  /** Bytes the source sent. */
  readonly sourceSize: number;
  /** Bytes written to the file (after gunzip). */
  readonly size: number;
  readonly head: Buffer;
  readonly checksums: { md5?: string; sha256?: string };
  readonly compression?: 'gzip';
}

const ZERO = Buffer.alloc(1 << 20);

function isZero(chunk: Buffer): boolean {
  for (let off = 0; off < chunk.length; off += ZERO.length) {
    const part = chunk.subarray(off, Math.min(chunk.length, off + ZERO.length));
    if (!part.equals(ZERO.subarray(0, part.length))) return false;
  }
  return true;
}

async function* metered(source: AsyncIterable<Buffer>, hashes: Hash[], opts: ReceiveOptions, counter: { n: number }): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    opts.signal?.throwIfAborted();
    counter.n += chunk.length;
    if (opts.maxSize > 0 && counter.n > opts.maxSize) throw new ImportError('SourceTooLarge', `the source is larger than the limit of ${opts.maxSize} bytes`);
    for (const h of hashes) h.update(chunk);
    opts.progress.add(chunk.length);
    yield chunk;
  }
}

/** Gather chunks into blocks of at least `min` bytes (fewer, larger writes; whole blocks for hole detection). */
async function* coalesce(source: AsyncIterable<Buffer>, min: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let length = 0;
  for await (const chunk of source) {
    parts.push(chunk);
    length += chunk.length;
    if (length >= min) {
      yield parts.length === 1 ? chunk : Buffer.concat(parts, length);
      parts = [];
      length = 0;
    }
  }
  if (length > 0) yield Buffer.concat(parts, length);
}

export async function receiveToFile(source: AsyncIterable<Buffer>, path: string, opts: ReceiveOptions): Promise<Received> {
  const md5 = opts.expected.md5 !== undefined ? createHash('md5') : undefined;
  const sha256 = opts.expected.sha256 !== undefined ? createHash('sha256') : undefined;
  const counter = { n: 0 };
  const raw = metered(
    source,
    [md5, sha256].filter((h) => h !== undefined),
    opts,
    counter,
  );
  // Peek at the first bytes to see whether the source is gzip-compressed.
  const first = await raw.next();
  const firstChunk = first.done === true ? Buffer.alloc(0) : first.value;
  const rest = (async function* (): AsyncGenerator<Buffer> {
    if (firstChunk.length > 0) yield firstChunk;
    yield* raw;
  })();
  const gzip = firstChunk[0] === 0x1f && firstChunk[1] === 0x8b;
  const content: AsyncIterable<Buffer> = gzip ? Readable.from(rest).pipe(createGunzip()) : rest;

  const file = await open(path, 'w');
  let size = 0;
  const headParts: Buffer[] = [];
  let headLength = 0;
  try {
    for await (const block of coalesce(content, 1 << 20)) {
      if (headLength < DETECT_BYTES) {
        headParts.push(block.subarray(0, DETECT_BYTES - headLength));
        headLength += Math.min(block.length, DETECT_BYTES - headLength);
      }
      if (gzip && opts.maxSize > 0 && size + block.length > opts.maxSize) {
        throw new ImportError('SourceTooLarge', `the unpacked source is larger than the limit of ${opts.maxSize} bytes`);
      }
      if (!isZero(block)) await file.write(block, 0, block.length, size);
      size += block.length;
    }
    await file.truncate(size);
    await file.sync();
  } catch (err: unknown) {
    if (gzip && typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' && err.code.startsWith('Z_')) {
      throw new ImportError('CorruptImage', `the gzip-compressed source is damaged: ${String((err as { message?: unknown }).message)}`, { cause: err });
    }
    throw err;
  } finally {
    await file.close();
  }
  const checksums: { md5?: string; sha256?: string } = {};
  if (md5 !== undefined) checksums.md5 = md5.digest('hex');
  if (sha256 !== undefined) checksums.sha256 = sha256.digest('hex');
  for (const algo of ['md5', 'sha256'] as const) {
    const want = opts.expected[algo]?.toLowerCase();
    if (want !== undefined && checksums[algo] !== want) {
      throw new ImportError('ChecksumMismatch', `the ${algo} checksum of the source is ${checksums[algo]}, expected ${want}`);
    }
  }
  return { sourceSize: counter.n, size, head: Buffer.concat(headParts), checksums, ...(gzip ? { compression: 'gzip' as const } : {}) };
}
