import { z } from 'zod';
import { env } from '../../config/index.js';
import { ConflictError } from '../../errors/index.js';
import { serve, type ServerHandle } from '../server.js';
import type { FunctionDefinition } from '../types.js';

/**
 * A function that exercises every part of the host, for the host's own component tests. Its
 * behaviour is chosen by the event type (probe.echo, probe.silent, probe.conflict, probe.crash,
 * probe.hold) and by route.
 */
export const probeConfig = z.object({
  PROBE_SOURCE: env.string('/probe').describe('Source attribute of reply events'),
});

export interface ProbeState {
  ready: boolean;
  stopped: number;
  /** probe.hold requests wait here until the test releases them (or their request is cut). */
  readonly held: Hold;
}

/** Requests kept in flight on purpose, for as long as a test needs: no guess of how long that is. */
export class Hold {
  private readonly waiting = new Set<() => void>();

  /** How many requests are being held right now. */
  get count(): number {
    return this.waiting.size;
  }

  /** Let every held request answer. */
  release(): void {
    for (const answer of this.waiting) answer();
    this.waiting.clear();
  }

  /** Wait until released; rejects when the signal aborts (the host cut the request). */
  wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (): void => {
        this.waiting.delete(done);
        signal.removeEventListener('abort', cut);
        resolve();
      };
      const cut = (): void => {
        this.waiting.delete(done);
        reject(signal.reason as Error);
      };
      if (signal.aborted) return cut();
      this.waiting.add(done);
      signal.addEventListener('abort', cut, { once: true });
    });
  }
}

export function probeFunction(state: ProbeState): FunctionDefinition<typeof probeConfig, ProbeState> {
  return {
    name: 'probe',
    config: probeConfig,
    init: () => state,
    handle: async (event, { config, signal }) => {
      if (event.type === 'probe.silent') return undefined;
      if (event.type === 'probe.conflict') throw new ConflictError('conflict on purpose');
      if (event.type === 'probe.crash') throw new Error('secret internal detail');
      if (event.type === 'probe.hold') await state.held.wait(signal);
      return event.cloneWith({ id: `${event.id}-reply`, type: 'probe.reply', source: config.PROBE_SOURCE });
    },
    routes: [
      { method: 'post', path: '/objects/:name', handle: (req) => ({ status: 201, body: { name: req.params['name'], got: req.json() } }) },
      { method: 'get', path: '/text', handle: () => ({ body: 'plain text', headers: { 'x-probe': 'yes' } }) },
      { method: 'get', path: '/empty', handle: () => undefined },
      { method: 'post', path: '/small', bodyLimitBytes: 16, handle: () => undefined },
    ],
    readiness: ({ state: s }) => s.ready,
    shutdown: ({ state: s }) => {
      s.stopped += 1;
    },
  } satisfies FunctionDefinition<typeof probeConfig, ProbeState>;
}

/** The body limit the probe host runs with, small so that over-limit bodies are cheap. */
export const PROBE_BODY_LIMIT = 1024;

/** Serve the probe in-process on a free loopback port. */
export async function startProbe(extraEnv: Record<string, string> = {}): Promise<{ host: ServerHandle; state: ProbeState }> {
  const state: ProbeState = { ready: true, stopped: 0, held: new Hold() };
  const host = await serve(probeFunction(state), {
    env: { PORT: '0', HOST: '127.0.0.1', BODY_LIMIT_BYTES: String(PROBE_BODY_LIMIT), ...extraEnv },
  });
  return { host, state };
}
