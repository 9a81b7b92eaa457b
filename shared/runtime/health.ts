import type { Express } from 'express';
import { denialReply, type RequestGuard } from '../authz/index.js';
import { errorMessage } from '../errors/index.js';
import { EXPOSITION_CONTENT_TYPE, type Registry } from '../metrics/index.js';
import type { Drain } from './drain.js';
import { tagRoute } from './http/observe.js';
import { jsonReply, sendReply } from './http/reply.js';
import type { Awaitable } from './types.js';

export const LIVENESS_PATH = '/health/liveness';
export const READINESS_PATH = '/health/readiness';
export const METRICS_PATH = '/metrics';

export interface HealthParts {
  readonly drain: Drain;
  readonly metrics: Registry;
  /** The function's readiness hook, bound to its context. */
  readonly ready: (() => Awaitable<boolean>) | undefined;
  /** Who may read /metrics (METRICS_AUTH=kubernetes); undefined: anyone. Health stays open. */
  readonly metricsGuard?: RequestGuard | undefined;
}

/** Liveness (the process answers), readiness (not draining and the hook agrees) and metrics. */
export function mountHealth(app: Express, { drain, metrics, ready, metricsGuard }: HealthParts): void {
  app.get(LIVENESS_PATH, tagRoute(LIVENESS_PATH), (_req, res) => sendReply(res, jsonReply(200, { status: 'alive' })));
  app.get(READINESS_PATH, tagRoute(READINESS_PATH), async (_req, res) => {
    const notReady = drain.draining ? 'draining' : await whyNotReady(ready);
    const reply = notReady === undefined ? jsonReply(200, { status: 'ready' }) : jsonReply(503, { status: 'not ready', reason: notReady });
    sendReply(res, reply);
  });
  app.get(METRICS_PATH, tagRoute(METRICS_PATH), async (req, res) => {
    const decision = await metricsGuard?.check(req.headers.authorization);
    if (decision?.allowed === false) {
      sendReply(res, denialReply(decision));
      return;
    }
    sendReply(res, { status: 200, headers: { 'content-type': EXPOSITION_CONTENT_TYPE }, body: await metrics.expose() });
  });
}

/** Why the function is not ready, or undefined when it is. */
async function whyNotReady(ready: HealthParts['ready']): Promise<string | undefined> {
  if (ready === undefined) return undefined;
  try {
    return (await ready()) ? undefined : 'the readiness hook said no';
  } catch (err: unknown) {
    return `the readiness hook failed: ${errorMessage(err)}`;
  }
}
