import type { ServerResponse } from 'node:http';
import type { FunctionContext, HandlerContext } from './types.js';

/**
 * The context of one request: a child logger carrying the request id and a signal that aborts when
 * the connection closes before the answer was sent.
 */
export function requestContext<Cfg, S>(
  base: FunctionContext<Cfg, S>,
  requestId: string,
  res: ServerResponse,
): HandlerContext<Cfg, S> {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('the client connection closed before the answer was sent'));
  });
  return { ...base, log: base.log.child({ requestId }), signal: controller.signal };
}
