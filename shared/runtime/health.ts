import { denialReply, type RequestGuard } from '../authz/index.js';
import { errorMessage } from '../errors/index.js';
import { EXPOSITION_CONTENT_TYPE, type Registry } from '../metrics/index.js';
import type { Drain } from './drain.js';
import type { HostRoute } from './http/exchange.js';
import { jsonReply, sendReply, type Reply } from './http/reply.js';
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

const ALIVE: Reply = jsonReply(200, { status: 'alive' });
const READY: Reply = jsonReply(200, { status: 'ready' });

/** Liveness (the process answers), readiness (not draining and the hook agrees) and metrics. */
export function healthRoutes({ drain, metrics, ready, metricsGuard }: HealthParts): HostRoute[] {
  const get = (path: string, endpoint: HostRoute['endpoint']): HostRoute => ({ method: 'GET', path, endpoint });
  return [
    get(LIVENESS_PATH, ({ res }) => sendReply(res, ALIVE)),
    get(READINESS_PATH, async ({ res }) => {
      const notReady = drain.draining ? 'draining' : await whyNotReady(ready);
      sendReply(res, notReady === undefined ? READY : jsonReply(503, { status: 'not ready', reason: notReady }));
    }),
    get(METRICS_PATH, async ({ req, res }) => {
      const decision = await metricsGuard?.check(req.headers.authorization);
      if (decision?.allowed === false) {
        sendReply(res, denialReply(decision));
        return;
      }
      sendReply(res, { status: 200, headers: { 'content-type': EXPOSITION_CONTENT_TYPE }, body: await metrics.expose() });
    }),
  ];
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
