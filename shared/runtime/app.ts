import express, { type Express } from 'express';
import type { z } from 'zod';
import type { RequestGuard } from '../authz/index.js';
import type { Registry } from '../metrics/index.js';
import { cloudEventEndpoint } from './cloudevents/endpoint.js';
import type { HostConfig } from './config.js';
import type { Drain } from './drain.js';
import { mountHealth } from './health.js';
import { readBody } from './http/body.js';
import { errorHandler, notFound } from './http/errors.js';
import { httpMetrics, observe, tagRoute } from './http/observe.js';
import { routeEndpoint } from './http/routes.js';
import type { HostedFunction } from './context.js';

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

/** The express application: observation, health and metrics, the function's routes, CloudEvents, errors. */
export function buildApp<C extends z.ZodObject, S>({ def, ctx, host, drain, metrics, tlsStatus, metricsGuard }: AppParts<C, S>): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(observe(httpMetrics(metrics), drain));
  const hook = def.readiness;
  const ready = async (): Promise<boolean> => {
    const tlsProblem = tlsStatus?.();
    if (tlsProblem !== undefined) throw new Error(tlsProblem);
    return hook === undefined ? true : await hook(ctx);
  };
  mountHealth(app, { drain, metrics, ready, metricsGuard });
  for (const route of def.routes ?? []) {
    const limit = readBody(route.bodyLimitBytes ?? host.BODY_LIMIT_BYTES);
    app.route(route.path)[route.method](tagRoute(route.path), limit, routeEndpoint(route, ctx));
  }
  if (def.handle !== undefined) {
    const endpoint = cloudEventEndpoint(def.handle, ctx);
    app.post(CLOUDEVENTS_PATH, tagRoute(CLOUDEVENTS_PATH), readBody(host.BODY_LIMIT_BYTES), endpoint);
  }
  app.use(notFound);
  app.use(errorHandler(ctx.log));
  return app;
}
