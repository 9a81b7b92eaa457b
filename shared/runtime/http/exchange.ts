import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Awaitable } from '../types.js';
import type { Params } from './router.js';

/** One request as an endpoint sees it. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The raw path (still percent-encoded), without the query string. */
  readonly path: string;
  readonly params: Params;
}

/** Answers one request; a throw or rejection is answered as a JSON error (http/errors.ts). */
export type Endpoint = (exchange: Exchange) => Awaitable<void>;

/** What the host's router finds for a request: the endpoint and the `route` label of its metrics. */
export interface HostRoute {
  readonly label: string;
  readonly endpoint: Endpoint;
}

/** A promise or any thenable (what an `Awaitable` handler may return when it does not answer at once). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}
