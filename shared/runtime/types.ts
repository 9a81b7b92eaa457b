import type { X509Certificate } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { CloudEvent } from 'cloudevents';
import type { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';

export type Awaitable<T> = T | Promise<T>;

/** What every hook and handler receives. `log` is a per-request child inside handlers. */
export interface FunctionContext<Cfg, S> {
  readonly name: string;
  /** The function's own configuration, parsed once at start and frozen. */
  readonly config: Readonly<Cfg>;
  /** What `init` returned (`undefined` when there is no `init`). */
  readonly state: S;
  readonly log: Logger;
  /** The host's registry, served on `/metrics`; register the function's own metrics in `init`. */
  readonly metrics: Registry;
}

export type InitContext<Cfg> = Omit<FunctionContext<Cfg, never>, 'state'>;

/** What handlers receive: the function context plus the request's abort signal. */
export interface HandlerContext<Cfg, S> extends FunctionContext<Cfg, S> {
  /** Aborts when the client goes away before the answer is sent (including connections cut at the drain deadline). */
  readonly signal: AbortSignal;
  /** Who sent the request, as the function's `senders` check named it; undefined without one. */
  readonly sender?: string | undefined;
}

/** Handles one CloudEvent; a returned event is the reply (same mode as the request), none gives 204. */
export type CloudEventHandler<Cfg, S> = (event: CloudEvent<unknown>, ctx: HandlerContext<Cfg, S>) => Awaitable<CloudEvent<unknown> | void>;

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A plain HTTP request, already read (the body is bounded by the body limit). */
export interface RouteRequest {
  readonly method: string;
  /** The path without the query string. */
  readonly path: string;
  readonly params: Readonly<Record<string, string | string[] | undefined>>;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** Every header as the list of its values (repeated headers are not joined). */
  readonly headersDistinct: Readonly<Record<string, string[] | undefined>>;
  /** The client's TLS certificate, when the function asks for them (`clientCertificates`) and one was sent. */
  readonly peerCertificate: X509Certificate | undefined;
  readonly body: Buffer;
  /** The body parsed as JSON; throws BadRequestError naming the problem when it is empty or not JSON. */
  json(): unknown;
}

/**
 * A plain HTTP answer. `body`: a Buffer or string is sent as is, anything else as JSON; no body and
 * no status gives 204.
 */
export interface RouteResponse {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

export interface Route<Cfg, S> {
  readonly method: HttpMethod;
  /** An express 5 path pattern, e.g. `/apis/:group/:version/*rest`. */
  readonly path: string;
  /** Overrides BODY_LIMIT_BYTES for this route. */
  readonly bodyLimitBytes?: number;
  readonly handle: (req: RouteRequest, ctx: HandlerContext<Cfg, S>) => Awaitable<RouteResponse | void>;
}

/**
 * An HTTP Upgrade request (WebSocket, SPDY). The handler owns the socket from here on: it answers
 * the handshake (or an HTTP error) on it and ends it. `ctx.signal` aborts when the host starts
 * draining, because a stream has no natural end: the handler closes it cleanly then; the host
 * destroys what is still open at the drain deadline.
 */
export interface UpgradeRequest {
  readonly request: IncomingMessage;
  readonly socket: Duplex;
  readonly head: Buffer;
  /** As on `RouteRequest`. */
  readonly peerCertificate: X509Certificate | undefined;
}

/** What a `senders` check sees of a request: everything but the body, which is not read yet. */
export interface SenderRequest {
  readonly method: string;
  /** The path without the query string. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress: string | undefined;
  readonly peerCertificate: X509Certificate | undefined;
}

/** A sender's name (for `ctx.sender`), or the answer that refuses the request. */
export type SenderVerdict = { readonly sender: string } | { readonly refused: RouteResponse };

export type SenderCheck<Cfg, S> = (request: SenderRequest, ctx: FunctionContext<Cfg, S>) => Awaitable<SenderVerdict>;

export type UpgradeHandler<Cfg, S> = (upgrade: UpgradeRequest, ctx: HandlerContext<Cfg, S>) => Awaitable<void>;

/**
 * A function as one typed value. `config` is a zod object whose keys are environment variable names;
 * the host parses it together with its own keys at start and reports every problem at once.
 */
export interface FunctionDefinition<C extends z.ZodObject = z.ZodObject, S = undefined> {
  readonly name: string;
  readonly config: C;
  /** Runs once before the server listens; what it returns is `ctx.state`. A throw aborts the start. */
  readonly init?: (ctx: InitContext<z.infer<C>>) => Awaitable<S>;
  /** Receives CloudEvents (binary, structured, batched) POSTed to `/`. */
  readonly handle?: CloudEventHandler<z.infer<C>, S>;
  /** Plain HTTP routes (AdmissionReview, aggregated API paths). */
  readonly routes?: ReadonlyArray<Route<z.infer<C>, S>>;
  /** HTTP Upgrade requests (streams); without it they are served as plain requests. */
  readonly upgrade?: UpgradeHandler<z.infer<C>, S>;
  /**
   * 'request': over TLS, ask clients for a certificate (not required, not verified by the host: the
   * function checks `peerCertificate` against the CA it trusts, e.g. an aggregated API's front proxy).
   */
  readonly clientCertificates?: 'request';
  /**
   * Checks who sends each request to the function's routes and CloudEvent endpoint, before the body
   * is read (health and `/metrics` are not asked): a refusal is answered as it is, with the body never
   * read; an accepted sender's name is `ctx.sender` in the handler.
   */
  readonly senders?: SenderCheck<z.infer<C>, S>;
  /** Extra readiness condition for `/health/readiness`; false or a throw answers 503. */
  readonly readiness?: (ctx: FunctionContext<z.infer<C>, S>) => Awaitable<boolean>;
  /** Runs once after the server has drained (SIGTERM or `close()`), within the drain deadline. */
  readonly shutdown?: (ctx: FunctionContext<z.infer<C>, S>) => Awaitable<void>;
}

/**
 * Declare a function. Identity at run time; it exists so that `S` is inferred from `init` and every
 * handler sees the typed config and state.
 */
export function defineFunction<C extends z.ZodObject, S = undefined>(def: FunctionDefinition<C, S>): FunctionDefinition<C, S> {
  return def;
}
