import type { RequestListener } from 'node:http';
import type { z } from 'zod';
import type { RequestGuard } from '../authz/index.js';
import { NotFoundError } from '../errors/index.js';
import type { Registry } from '../metrics/index.js';
import { cloudEventEndpoint } from './cloudevents/endpoint.js';
import type { HostConfig } from './config.js';
import type { HostedFunction } from './context.js';
import type { Drain } from './drain.js';
import { healthRoutes } from './health.js';
import { answerError } from './http/errors.js';
import { isThenable, type HostRoute } from './http/exchange.js';
import { httpMetrics, observe } from './http/observe.js';
import { Router, type Found, type RouteEntry } from './http/router.js';
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

/**
 * The request listener: every route (health and metrics first, then the function's routes in their
 * order, then CloudEvents on `/`) compiled once into a router; per request only the lookup, the
 * observation (metrics, drain) and the endpoint run. A request no route matches gets a JSON 404.
 */
export function buildApp<C extends z.ZodObject, S>({ def, ctx, host, drain, metrics, tlsStatus, metricsGuard }: AppParts<C, S>): RequestListener {
  const hook = def.readiness;
  const ready = async (): Promise<boolean> => {
    const tlsProblem = tlsStatus?.();
    if (tlsProblem !== undefined) throw new Error(tlsProblem);
    return hook === undefined ? true : await hook(ctx);
  };
  const routes: Array<RouteEntry<HostRoute>> = healthRoutes({ drain, metrics, ready, metricsGuard });
  for (const route of def.routes ?? []) {
    const endpoint = withSenderCheck(routeEndpoint(route, ctx, route.bodyLimitBytes ?? host.BODY_LIMIT_BYTES), def.senders, ctx);
    routes.push({ method: route.method.toUpperCase(), path: route.path, value: { label: route.path, endpoint } });
  }
  if (def.handle !== undefined) {
    const endpoint = withSenderCheck(cloudEventEndpoint(def.handle, ctx, host.BODY_LIMIT_BYTES), def.senders, ctx);
    routes.push({ method: 'POST', path: CLOUDEVENTS_PATH, value: { label: CLOUDEVENTS_PATH, endpoint } });
  }
  const router = new Router(routes);
  const observed = httpMetrics(metrics, drain);
  const log = ctx.log;

  return (req, res) => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const method = req.method ?? 'GET';
    let found: Found<HostRoute> | undefined;
    try {
      found = router.find(method, path) ?? undefined;
    } catch (err: unknown) {
      observe(observed, drain, req, res, 'unmatched');
      answerError(log, req, res, path, err);
      return;
    }
    observe(observed, drain, req, res, found?.value.label ?? 'unmatched');
    if (found === undefined) {
      answerError(log, req, res, path, new NotFoundError(`no route for ${method} ${path}`));
      return;
    }
    try {
      const done = found.value.endpoint({ req, res, path, params: found.params });
      if (isThenable(done)) Promise.resolve(done).catch((err: unknown) => answerError(log, req, res, path, err));
    } catch (err: unknown) {
      answerError(log, req, res, path, err);
    }
  };
}
