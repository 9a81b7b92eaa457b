import type { ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { FunctionContext, FunctionDefinition, HandlerContext } from './types.js';

/** A declaration with the context the host built for it: what the host's parts are given. */
export interface HostedFunction<C extends z.ZodObject, S> {
  readonly def: FunctionDefinition<C, S>;
  readonly ctx: FunctionContext<z.infer<C>, S>;
}

/**
 * The context of one request: a child logger carrying the request id and a signal that aborts when
 * the connection closes before the answer was sent. Both are made when a handler first reads them
 * (most never do), so `requestId` may be a function, called at most once.
 */
export function requestContext<Cfg, S>(base: FunctionContext<Cfg, S>, requestId: string | (() => string), res: ServerResponse): HandlerContext<Cfg, S> {
  let log: Logger | undefined;
  let controller: AbortController | undefined;
  return {
    name: base.name,
    config: base.config,
    state: base.state,
    metrics: base.metrics,
    get log(): Logger {
      return (log ??= base.log.child({ requestId: typeof requestId === 'string' ? requestId : requestId() }));
    },
    get signal(): AbortSignal {
      return (controller ??= abortedOnClose(res)).signal;
    },
  };
}

function abortedOnClose(res: ServerResponse): AbortController {
  const controller = new AbortController();
  const check = (): void => {
    if (!res.writableFinished) controller.abort(new Error('the client connection closed before the answer was sent'));
  };
  if (res.closed) check();
  else res.once('close', check);
  return controller;
}
