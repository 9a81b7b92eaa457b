import { afterEach, describe, expect, it } from '@jest/globals';
import { waitFor } from '../../shared/testing/wait.js';
import { binaryHeaders, listeningPort, send, startFunctionProcess, type FunctionProcess } from '../../shared/runtime/testing/index.js';

/**
 * The function as a real process. Tests run from TypeScript sources, so the entry module is started
 * with `node --import tsx functions/sample-echo/index.ts` (one process: SIGTERM reaches the function
 * itself, as it does for `node dist/functions/sample-echo/index.js` in the image).
 */
const ENTRY = 'functions/sample-echo/index.ts';

describe('sample-echo as a process', () => {
  let proc: FunctionProcess | undefined;
  afterEach(() => proc?.kill());

  it('drains on SIGTERM: the in-flight request completes with 200, new connections are refused, exit 0', async () => {
    // METRICS_AUTH none: waitForInFlightRequests reads /metrics without a token. The echo is slow enough
    // (5 s) to still be in flight when a busy machine gets round to observing it.
    proc = startFunctionProcess(ENTRY, { env: { PORT: '0', HOST: '127.0.0.1', ECHO_DELAY_MS: '5000', METRICS_AUTH: 'none' } });
    const port = await listeningPort(proc);
    const url = `http://127.0.0.1:${port}`;
    const inFlight = send(url, { method: 'POST', headers: binaryHeaders({ id: 'slow-1', type: 'drain' }), body: '{"n":1}' });
    await waitForInFlightRequests(url, 2); // the echo plus the /metrics request asking

    proc.child.kill('SIGTERM');
    await proc.waitForLog((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('draining'));
    const refused = await send(`${url}/health/liveness`).then(
      () => 'answered',
      (err: NodeJS.ErrnoException) => err.code,
    );
    const answer = await inFlight;
    const exit = await proc.exited;

    expect(refused).toBe('ECONNREFUSED');
    expect([answer.status, answer.headers['ce-type'], answer.json()]).toEqual([200, 'drain.echo', { n: 1 }]);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(proc.logs.map((r) => r['msg'])).toEqual(expect.arrayContaining(['sample-echo stopped', 'exiting']));
  });

  it('exits non-zero at start with one message that names every bad key', async () => {
    proc = startFunctionProcess(ENTRY, {
      env: { PORT: '99999', BODY_LIMIT_BYTES: '-5', ECHO_DELAY_MS: 'soon', TLS_CERT_FILE: '/nonexistent/tls.crt' },
    });
    const exit = await proc.exited;
    await new Promise((resolve) => setImmediate(resolve)); // let the last lines arrive

    expect(exit.code).not.toBe(0);
    expect(proc.logs).toHaveLength(1);
    const [record] = proc.logs;
    expect(record).toMatchObject({ level: 'fatal', code: 'CONFIG_INVALID', stream: 'stdout' });
    // TLS_CERT_FILE alone: the missing TLS_KEY_FILE is the problem (the files themselves are read later).
    for (const key of ['PORT', 'BODY_LIMIT_BYTES', 'ECHO_DELAY_MS', 'TLS_KEY_FILE']) {
      expect(record?.['msg']).toContain(`${key}: `);
    }
  });
});

async function waitForInFlightRequests(url: string, count: number): Promise<void> {
  await waitFor(`${count} requests in flight`, async () => {
    const metrics = await send(`${url}/metrics`);
    return Number(/^http_requests_in_flight (\d+)$/m.exec(metrics.body)?.[1]) >= count;
  });
}
