import express, { type Request, type RequestHandler } from 'express';

const EMPTY = Buffer.alloc(0);

/** Read the whole body as bytes, any content type, refusing more than `limit` bytes with 413. */
export function readBody(limit: number): RequestHandler {
  return express.raw({ type: () => true, limit });
}

/** The body read by `readBody` (empty when the request had none). */
export function bodyOf(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : EMPTY;
}
