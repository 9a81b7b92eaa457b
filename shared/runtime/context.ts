import type { FunctionContext } from './types.js';

/** The same context with a per-request child logger carrying the request id. */
export function requestContext<Cfg, S>(base: FunctionContext<Cfg, S>, requestId: string): FunctionContext<Cfg, S> {
  return { ...base, log: base.log.child({ requestId }) };
}
