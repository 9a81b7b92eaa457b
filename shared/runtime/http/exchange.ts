import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Awaitable } from '../types.js';

/** Path parameters: `:name` gives a string, a wildcard `*rest` the list of its segments. */
export type Params = Record<string, string | string[]>;

/** One request as an endpoint sees it. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The raw path (still percent-encoded), without the query string. */
  readonly path: string;
  readonly params: Params;
  /** The request body as read by express (inflated, within the route's limit); empty for none. */
  readonly body: Buffer;
}

/** Answers one request; a throw or rejection is answered as a JSON error (http/errors.ts). */
export type Endpoint = (exchange: Exchange) => Awaitable<void>;

/** One route of the host: GET, POST... (upper case), an express 5 path pattern and its endpoint. */
export interface HostRoute {
  readonly method: string;
  readonly path: string;
  readonly endpoint: Endpoint;
  /** Largest body read for it; undefined: the route reads none. */
  readonly bodyLimit?: number;
}

/** A promise or any thenable (what an `Awaitable` handler may return when it does not answer at once). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}
