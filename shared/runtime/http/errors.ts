import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, errorMessage } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import { jsonReply, sendReply, type Reply } from './reply.js';

/** The JSON error body every endpoint answers with: `{"error":{"code":...,"message":...}}`. */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
}

/** Anything thrown on the request path as an AppError; undefined for the unknown (an opaque 500). */
export function toAppError(err: unknown): AppError | undefined {
  return err instanceof AppError ? err : undefined;
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

/**
 * Answer a failed request with its JSON error, logging server-side failures with their cause. When
 * the answer had already begun, nothing sensible can follow it: the connection is cut.
 */
export function answerError(log: Logger, req: IncomingMessage, res: ServerResponse, path: string, err: unknown): void {
  if (res.headersSent) {
    log.error({ err, method: req.method, path }, 'request failed after its answer began');
    req.socket.destroy();
    return;
  }
  const reply = errorReply(err);
  if (reply.status >= 500) log.error({ err, method: req.method, path }, 'request failed');
  else log.debug({ status: reply.status, reason: errorMessage(err), path }, 'request rejected');
  sendReply(res, reply);
}
