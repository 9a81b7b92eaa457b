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
