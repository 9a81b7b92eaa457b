import type { IncomingMessage } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type NextFunction, type Request, type RequestHandler } from 'express';
import type { z } from 'zod';
import type { RequestGuard } from '../authz/index.js';
import { AppError, BadRequestError, NotFoundError, PayloadTooLargeError } from '../errors/index.js';
import type { Registry } from '../metrics/index.js';
import { cloudEventEndpoint } from './cloudevents/endpoint.js';
import type { HostConfig } from './config.js';
import type { HostedFunction } from './context.js';
import type { Drain } from './drain.js';
import { healthRoutes } from './health.js';
import { answerError } from './http/errors.js';
import { isThenable, type Exchange, type HostRoute } from './http/exchange.js';
import { httpMetrics, observe } from './http/observe.js';
import { routeEndpoint } from './http/routes.js';
import { withSenderCheck } from './senders.js';

/** The path CloudEvents are POSTed to (Knative delivers to the root). */
export const CLOUDEVENTS_PATH = '/';

export interface AppParts<C extends z.ZodObject, S> extends HostedFunction<C, S> {
  readonly host: HostConfig;
  readonly drain: Drain;
  readonly metrics: Registry;
  /** Who may read /metrics; undefined: anyone (METRICS_AUTH=none). */
  readonly metricsGuard?: RequestGuard | undefined;
  /** Why the serving certificate keeps the function from being ready (undefined: fine or no TLS). */
  readonly tlsStatus?: () => string | undefined;
}

const EMPTY = Buffer.alloc(0);

/**
 * The express 5 app: health and metrics first, then the function's routes in their order, then
 * CloudEvents on `/`, each an express route (express's matching: any case, one optional trailing
 * slash, HEAD by the GET route) whose body express reads (`express.raw`: gzip, deflate and br
 * inflated, the route's limit counted on the inflated bytes). A request no route matches gets a JSON
 * 404; every error the JSON error answer of http/errors.ts.
 */
export function buildApp<C extends z.ZodObject, S>({ def, ctx, host, drain, metrics, tlsStatus, metricsGuard }: AppParts<C, S>): Express {
  const hook = def.readiness;
  const ready = async (): Promise<boolean> => {
    const tlsProblem = tlsStatus?.();
    if (tlsProblem !== undefined) throw new Error(tlsProblem);
    return hook === undefined ? true : await hook(ctx);
  };
  const health = healthRoutes({ drain, metrics, ready, metricsGuard });
  const own: HostRoute[] = (def.routes ?? []).map((route) => ({
    method: route.method.toUpperCase(),
    path: route.path,
    endpoint: routeEndpoint(route, ctx),
    bodyLimit: route.bodyLimitBytes ?? host.BODY_LIMIT_BYTES,
  }));
  if (def.handle !== undefined)
    own.push({ method: 'POST', path: CLOUDEVENTS_PATH, endpoint: cloudEventEndpoint(def.handle, ctx), bodyLimit: host.BODY_LIMIT_BYTES });
  // The senders check sees each request to the function's own routes (never health or metrics)
  // before its body is read; its continuation is express's `next`.
  const check = def.senders;
  const gate: RequestHandler[] = [];
  if (check !== undefined) {
    const passed = withSenderCheck((ex) => (ex as GatedExchange).next(), check, ctx);
    gate.push((req, res, next) => {
      const exchange: GatedExchange = { req, res, path: req.path, params: {}, body: EMPTY, next };
      Promise.resolve(passed(exchange)).catch(next);
    });
  }
  const observed = httpMetrics(metrics, drain);
  const log = ctx.log;

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  // Every request is counted and timed under the pattern of the route that took it, once it is done.
  app.use((req, res, next) => {
    observe(observed, drain, req, res, () => routeLabel(req));
    next();
  });
  const router = express.Router();
  for (const route of health) router[routerMethod(route.method)](route.path, ...handlers(route));
  for (const route of own) router[routerMethod(route.method)](route.path, ...gate, ...handlers(route));
  app.use(router);
  app.use((req, _res, next) => next(new NotFoundError(`no route for ${req.method} ${req.path}`)));
  // express tells an error handler by its four parameters (`_next` unused); this one answers every error itself.
  const answer: ErrorRequestHandler = (err: unknown, req, res, _next) => answerError(log, req, res, req.path, hostError(err));
  app.use(answer);
  return app;
}

/** The exchange the senders check is shown: express's `next` goes on to the route. */
interface GatedExchange extends Exchange {
  readonly next: NextFunction;
}

/** The express middleware of one route: its body read (if it takes one), then its endpoint. */
function handlers({ endpoint, bodyLimit }: HostRoute): RequestHandler[] {
  const run: RequestHandler = (req, res, next) => {
    try {
      const done = endpoint({ req, res, path: req.path, params: req.params, body: (req.body as Buffer | undefined) ?? EMPTY });
      if (isThenable(done)) Promise.resolve(done).catch(next);
    } catch (err: unknown) {
      next(err);
    }
  };
  if (bodyLimit === undefined) return [run];
  return [express.raw({ type: () => true, limit: bodyLimit, inflate: true }), run];
}

type RouterMethod = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';

function routerMethod(method: string): RouterMethod {
  return method.toLowerCase() as RouterMethod;
}

/** The metrics label of a request: the pattern of the route that took it, or `unmatched`. */
function routeLabel(req: IncomingMessage): string {
  const route = (req as Request).route as { path?: unknown } | undefined;
  return typeof route?.path === 'string' ? route.path : 'unmatched';
}

/** What express and its body parser throw, as the host's errors; ours pass as they are. */
function hostError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const { type, limit, status, message } = (err ?? {}) as { type?: unknown; limit?: unknown; status?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(err);
  if (type === 'entity.too.large') return new PayloadTooLargeError(`request body is larger than the limit of ${String(limit)} bytes`, { cause: err });
  if (typeof type === 'string') return new BadRequestError(`request body could not be read: ${text}`, { cause: err });
  if (status === 400) return new BadRequestError(text, { cause: err });
  return err;
}
