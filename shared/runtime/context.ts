import type { ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { FunctionContext, FunctionDefinition, HandlerContext } from './types.js';

/** A declaration with the context the host built for it: what the host's parts are given. */
export interface HostedFunction<C extends z.ZodObject, S> {
  readonly def: FunctionDefinition<C, S>;
  readonly ctx: FunctionContext<z.infer<C>, S>;
}

/**
 * The context of one request: a child logger carrying the request id and a signal that aborts when
 * the connection closes before the answer was sent.
 */
export function requestContext<Cfg, S>(base: FunctionContext<Cfg, S>, requestId: string, res: ServerResponse): HandlerContext<Cfg, S> {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('the client connection closed before the answer was sent'));
  });
  return { ...base, log: base.log.child({ requestId }), signal: controller.signal };
}
