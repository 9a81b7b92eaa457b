import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import type { Counter } from '../../shared/metrics/index.js';
import { defineFunction, runIfMain } from '../../shared/runtime/index.js';

/** The sample's own keys; the host adds PORT, BODY_LIMIT_BYTES, DRAIN_TIMEOUT_MS... */
export const echoConfig = z.object({
  ECHO_SOURCE: env.string('/functions/sample-echo').describe('The source attribute of reply events'),
  ECHO_DELAY_MS: env.int(0).describe('Wait this long before replying (to exercise draining)'),
});

export interface EchoState {
  readonly echoed: Counter;
}

/**
 * Echoes every CloudEvent back (same data, type suffixed `.echo`, its own id and source) and serves an
 * empty route, `GET /empty`, that answers 204: the baseline of the function-host benchmark; `POST /empty`
 * reads the body (the host's default limit) and answers 204 too, the host's part of a POST in other
 * benchmarks (audit).
 */
export const sampleEcho = defineFunction({
  name: 'sample-echo',
  config: echoConfig,
  init: ({ metrics }): EchoState => ({
    echoed: metrics.counter({ name: 'sample_echo_events_total', help: 'CloudEvents echoed.' }),
  }),
  handle: async (event, ctx) => {
    const { config, state } = ctx;
    // ctx.signal is made on first read (an AbortController and a listener): read it only when waiting.
    if (config.ECHO_DELAY_MS > 0) await sleep(config.ECHO_DELAY_MS, undefined, { signal: ctx.signal });
    state.echoed.inc();
    return event.cloneWith({ id: randomUUID(), type: `${event.type}.echo`, source: config.ECHO_SOURCE });
  },
  routes: [
    { method: 'get', path: '/empty', handle: () => undefined },
    { method: 'post', path: '/empty', handle: () => undefined },
  ],
  readiness: () => true,
  shutdown: async ({ log, state }) => {
    log.info({ echoed: await state.echoed.get() }, 'sample-echo stopped');
  },
});

runIfMain(import.meta.url, sampleEcho);
