import type { ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import { senderOf } from './senders.js';
import type { FunctionContext, FunctionDefinition, HandlerContext } from './types.js';

/** A declaration with the context the host built for it: what the host's parts are given. */
export interface HostedFunction<C extends z.ZodObject, S> {
  readonly def: FunctionDefinition<C, S>;
  readonly ctx: FunctionContext<z.infer<C>, S>;
}

/** The id a request's log lines carry: given, or computed from the response (its request) on first use. */
export type RequestId = string | ((res: ServerResponse) => string);

/**
 * The context of one request: a child logger carrying the request id and a signal that aborts when
 * the connection closes before the answer was sent. Both are made when a handler first reads them
 * (most never do). A class, not an object literal with getters: one small object per request and no
 * closures (this is on every request's path). Handlers that copy it (`{ ...ctx }`) lose `log` and
 * `signal`, which live on the prototype; `forEvent` is the way to derive one.
 */
export class RequestContext<Cfg, S> implements HandlerContext<Cfg, S> {
  readonly name: string;
  readonly config: Readonly<Cfg>;
  readonly state: S;
  readonly metrics: Registry;
  readonly #parentLog: Logger;
  readonly #res: ServerResponse;
  readonly #bindings: 'requestId' | 'eventId';
  #id: RequestId;
  #log: Logger | undefined;
  #controller: AbortController | undefined;

  constructor(base: FunctionContext<Cfg, S>, requestId: RequestId, res: ServerResponse, parentLog?: Logger) {
    this.name = base.name;
    this.config = base.config;
    this.state = base.state;
    this.metrics = base.metrics;
    this.#parentLog = parentLog ?? base.log;
    this.#bindings = parentLog === undefined ? 'requestId' : 'eventId';
    this.#res = res;
    this.#id = requestId;
  }

  get log(): Logger {
    if (this.#log === undefined) {
      const id = typeof this.#id === 'string' ? this.#id : (this.#id = this.#id(this.#res));
      this.#log = this.#parentLog.child(this.#bindings === 'requestId' ? { requestId: id } : { eventId: id });
    }
    return this.#log;
  }

  get signal(): AbortSignal {
    return (this.#controller ??= abortedOnClose(this.#res)).signal;
  }

  get sender(): string | undefined {
    return senderOf(this.#res.req);
  }

  /** The context of one element of a batch: its log is this one's child with the element's `eventId`. */
  forEvent(eventId: string): RequestContext<Cfg, S> {
    return new RequestContext(this, eventId, this.#res, this.log);
  }
}

export function requestContext<Cfg, S>(base: FunctionContext<Cfg, S>, requestId: RequestId, res: ServerResponse): RequestContext<Cfg, S> {
  return new RequestContext(base, requestId, res);
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
