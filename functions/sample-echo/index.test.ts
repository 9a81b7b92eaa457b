import { describe, expect, it } from '@jest/globals';
import { CloudEvent } from 'cloudevents';
import { parseConfig } from '../../shared/config/index.js';
import { rootLogger } from '../../shared/log/index.js';
import { Registry } from '../../shared/metrics/index.js';
import { serve, type FunctionDefinition, type HandlerContext } from '../../shared/runtime/index.js';
import { binaryHeaders, send } from '../../shared/runtime/testing/index.js';
import { echoConfig, sampleEcho, type EchoState } from './index.js';

// Compile-time conformance: the export is a function declaration with this config and state.
const declaration = sampleEcho satisfies FunctionDefinition<typeof echoConfig, EchoState>;

function fakeContext(): HandlerContext<ReturnType<typeof parseConfig<typeof echoConfig>>, EchoState> {
  const metrics = new Registry();
  return {
    name: 'sample-echo',
    config: parseConfig(echoConfig, {}),
    state: { echoed: metrics.counter({ name: 'echoed_total', help: 'test' }) },
    log: rootLogger,
    metrics,
    signal: new AbortController().signal,
  };
}

describe('sample-echo', () => {
  it('declares a CloudEvent handler, an empty GET and POST route and readiness and shutdown hooks', () => {
    expect([declaration.name, typeof declaration.handle, typeof declaration.readiness, typeof declaration.shutdown]).toEqual([
      'sample-echo',
      'function',
      'function',
      'function',
    ]);
    expect(declaration.routes?.map((r) => `${r.method} ${r.path}`)).toEqual(['get /empty', 'post /empty']);
  });

  it('replies with the same data under the suffixed type, its own source and a new id, and counts it', async () => {
    const ctx = fakeContext();
    const event = new CloudEvent({ id: 'in-1', source: '/vm', type: 'vm.started', data: { name: 'alpha' } });
    const reply = await declaration.handle?.(event, ctx);
    expect(reply).toMatchObject({ type: 'vm.started.echo', source: '/functions/sample-echo', data: { name: 'alpha' } });
    expect([reply?.id === 'in-1', await ctx.state.echoed.get()]).toEqual([false, 1]);
  });

  it('echoes a binary-mode event and answers 204 on GET and POST /empty (413 past the body limit) when served', async () => {
    const host = await serve(sampleEcho, { env: { PORT: '0', HOST: '127.0.0.1' } });
    try {
      const echo = await send(host.url, { method: 'POST', headers: binaryHeaders({ id: 'h1', type: 'ping' }), body: '"pong"' });
      const empty = await send(`${host.url}/empty`);
      const posted = await send(`${host.url}/empty`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[{"message":"{}"}]' });
      const tooLarge = await send(`${host.url}/empty`, { method: 'POST', body: 'x'.repeat(2 << 20) });
      expect([echo.status, echo.headers['ce-type'], echo.body, empty.status, posted.status, tooLarge.status]).toEqual([
        200,
        'ping.echo',
        '"pong"',
        204,
        204,
        413,
      ]);
    } finally {
      await host.close();
    }
  });
});
