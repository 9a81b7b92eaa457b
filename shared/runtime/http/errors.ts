import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, BadRequestError, errorMessage, NotFoundError, PayloadTooLargeError } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import { jsonReply, sendReply, type Reply } from './reply.js';

/** The JSON error body every endpoint answers with: `{"error":{"code":...,"message":...}}`. */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
}

/** Normalise anything thrown on the request path into an AppError (unknown throwables become 500). */
export function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  const parserError = bodyParserError(err);
  if (parserError?.type === 'entity.too.large') {
    return new PayloadTooLargeError(`request body is larger than the limit of ${parserError.limit} bytes`, {
      cause: err,
    });
  }
  if (parserError !== undefined && parserError.status < 500) {
    return new BadRequestError(`request body could not be read: ${errorMessage(err)}`, { cause: err });
  }
  return undefined;
}

/** The status and body for an error; anything not an AppError is an opaque 500. */
export function errorBody(err: unknown): { status: number; body: ErrorBody } {
  const known = toAppError(err);
  if (known === undefined) return { status: 500, body: { code: 'INTERNAL', message: 'internal error' } };
  return { status: known.status, body: { code: known.code, message: known.message } };
}

export function errorReply(err: unknown): Reply {
  const { status, body } = errorBody(err);
  return jsonReply(status, { error: body });
}

/** Last middleware: answers JSON and logs server-side failures with their cause. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const reply = errorReply(err);
    if (reply.status >= 500) log.error({ err, method: req.method, path: req.path }, 'request failed');
    else log.debug({ status: reply.status, reason: errorMessage(err), path: req.path }, 'request rejected');
    sendReply(res, reply);
  };
}

export const notFound: RequestHandler = (req, _res, next) => {
  next(new NotFoundError(`no route for ${req.method} ${req.path}`));
};

interface BodyParserError {
  type: string;
  status: number;
  limit?: number;
}

function bodyParserError(err: unknown): BodyParserError | undefined {
  if (!(err instanceof Error)) return undefined;
  const { type, status, limit } = err as Error & Partial<Record<'type' | 'status' | 'limit', unknown>>;
  if (typeof type !== 'string' || typeof status !== 'number') return undefined;
  return { type, status, limit: typeof limit === 'number' ? limit : undefined };
}
