import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { BadRequestError, PayloadTooLargeError } from '../../errors/index.js';

const EMPTY = Buffer.alloc(0);

const DECODERS: Readonly<Record<string, () => NodeJS.ReadWriteStream>> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Read the whole request body as bytes, any content type, refusing more than `limit` bytes (after
 * decoding a gzip, deflate or br Content-Encoding) with 413. A request without a body (no
 * Content-Length, no Transfer-Encoding) costs nothing: its empty body is returned at once, not as a
 * promise. On a refusal the rest of the body is read and
 * dropped before the answer, so the client gets it rather than a reset connection.
 */
export function readBody(req: IncomingMessage, limit: number): Buffer | Promise<Buffer> {
  const { headers } = req;
  const declared = headers['content-length'];
  if (headers['transfer-encoding'] === undefined && (declared === undefined || declared === '0')) return EMPTY;
  if (declared !== undefined && Number(declared) > limit) return refuse(req, tooLarge(limit));
  const encoding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') return collect(req, req, limit);
  const decoder = DECODERS[encoding];
  if (decoder === undefined) return refuse(req, new BadRequestError(`request body could not be read: unsupported content encoding "${encoding}"`));
  const decoded = decoder();
  req.pipe(decoded);
  return collect(req, decoded as unknown as Readable, limit);
}

/** Read `source` (the request or its decoder) to the end, at most `limit` bytes. */
function collect(req: IncomingMessage, source: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      req.off('aborted', onAborted);
    };
    const fail = (err: Error): void => {
      cleanup();
      if (source !== req) req.unpipe();
      refuse(req, err).catch(reject);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) fail(tooLarge(limit));
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] ?? EMPTY) : Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => fail(new BadRequestError(`request body could not be read: ${err.message}`, { cause: err }));
    const onAborted = (): void => onError(new Error('request aborted'));
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    req.once('aborted', onAborted);
  });
}

/** Drop the rest of the body, then reject with `err`. */
function refuse(req: IncomingMessage, err: Error): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (req.complete || req.destroyed) {
      reject(err);
      return;
    }
    const done = (): void => reject(err);
    req.once('end', done);
    req.once('close', done);
    req.resume();
  });
}

function tooLarge(limit: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`request body is larger than the limit of ${limit} bytes`);
}
