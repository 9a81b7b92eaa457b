/**
 * The informer over a scripted fake apiserver (plain HTTP on port 0, the real RestTransport): the
 * failures a real apiserver does not produce on demand (a line that is not JSON, a 429, a 503, an
 * object the schema rejects) and the parts that need no apiserver (resync, unsubscribe).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { waitFor } from '../testing/wait.js';
import { rootLogger, type Logger } from '../log/index.js';
import type { ResourceDescriptor } from './descriptor.js';
import type { InvalidObjectError } from './errors.js';
import { Informer, type InformerOptions } from './informer.js';
import { ResourceClient } from './resource-client.js';
import { RestTransport } from './rest.js';

const descriptor: ResourceDescriptor = { group: 'test.example', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };
const schema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string(), namespace: z.string(), resourceVersion: z.string() }),
  spec: z.strictObject({ size: z.number() }),
});
type Widget = z.infer<typeof schema>;

const widget = (name: string, rv: string, spec: Record<string, unknown> = { size: 1 }): Record<string, unknown> => ({
  metadata: { namespace: 'ns', name, resourceVersion: rv },
  spec,
});
const line = (type: string, object: unknown): string => JSON.stringify({ type, object });

type Script = (res: http.ServerResponse) => void;

/** Answers lists and watches from queues of scripts; an unscripted watch stays open and silent. */
class FakeApiServer {
  readonly lists: Script[] = [];
  readonly watches: Script[] = [];
  readonly listCalls: URLSearchParams[] = [];
  readonly watchCalls: URLSearchParams[] = [];
  /** The latest watch answer, for sending more lines on it. */
  private watch: http.ServerResponse | undefined;
  private readonly server = http.createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://fake').searchParams;
    const watch = query.get('watch') === '1';
    (watch ? this.watchCalls : this.listCalls).push(query);
    if (watch) this.watch = res;
    const script = (watch ? this.watches : this.lists).shift();
    if (script !== undefined) script(res);
    else if (watch) stream(res, []);
    else list(res, [], '1');
  });

  async start(): Promise<RestTransport> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return new RestTransport(kc);
  }

  /** More lines on the open watch. */
  send(...lines: string[]): void {
    for (const l of lines) this.watch?.write(`${l}\n`);
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

function list(res: http.ServerResponse, items: unknown[], resourceVersion: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'WidgetList', metadata: { resourceVersion }, items }));
}

/** A watch answer: the lines, then the stream stays open (or ends). */
function stream(res: http.ServerResponse, lines: string[], end = false): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  for (const l of lines) res.write(`${l}\n`);
  if (end) res.end();
}

function status(res: http.ServerResponse, code: number, reason: string, headers: Record<string, string> = {}, details?: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: reason, details }));
}

/** The warn lines of the informer's restarts, as logged. */
function capturingLogger(): { logger: Logger; restarts: Record<string, unknown>[] } {
  const restarts: Record<string, unknown>[] = [];
  const logger = rootLogger.child({});
  logger.warn = (fields: Record<string, unknown>, msg?: string) => {
    if (msg === 'watch failed, restarting') restarts.push(fields);
  };
  return { logger, restarts };
}

interface Seen {
  events: string[];
  invalid: { obj: unknown; error: InvalidObjectError }[];
  updates: { obj: Widget; old: Widget }[];
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function informerOn(api: FakeApiServer, options: Partial<InformerOptions<Widget>> = {}): Promise<{ inf: Informer<Widget>; seen: Seen }> {
  const rest = await api.start();
  const client = new ResourceClient<Widget>(rest, descriptor, schema, { fieldManager: 'test' });
  const inf = new Informer<Widget>({ client, namespace: 'ns', backoff: { initialMs: 1, maxMs: 5 }, ...options });
  const seen: Seen = { events: [], invalid: [], updates: [] };
  inf.on('add', (o) => void seen.events.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`));
  inf.on('update', (o, old) => {
    seen.events.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`);
    seen.updates.push({ obj: o, old });
  });
  inf.on('delete', (o) => void seen.events.push(`delete ${o.metadata.name}`));
  inf.on('invalid', (obj, error) => {
    seen.events.push(`invalid ${obj.metadata.name ?? ''}@${obj.metadata.resourceVersion ?? ''}`);
    seen.invalid.push({ obj, error });
  });
  cleanups.push(
    () => api.close(),
    () => rest.close(),
    () => inf.stop(),
  );
  return { inf, seen };
}

describe('informer on bad input', () => {
  it('restarts the watch after a line that is not JSON, from the last resourceVersion, and keeps serving', async () => {
    const api = new FakeApiServer();
    api.lists.push((res) => list(res, [widget('a', '1')], '1'));
    api.watches.push((res) => stream(res, [line('ADDED', widget('b', '2')), '{"type":"ADDED","object":{"metad', line('ADDED', widget('lost', '9'))]));
    api.watches.push((res) => stream(res, [line('ADDED', widget('c', '3'))]));
    const { logger, restarts } = capturingLogger();
    const { inf, seen } = await informerOn(api, { logger });
    inf.start();

    await waitFor('c added', () => seen.events.includes('add c@3'));
    expect(seen.events).toEqual(['add a@1', 'add b@2', 'add c@3']);
    expect(api.watchCalls.map((q) => q.get('resourceVersion'))).toEqual(['1', '2']);
    expect([inf.stats.lists, inf.stats.failures.protocol, inf.store.keys().sort()]).toEqual([1, 1, ['ns/a', 'ns/b', 'ns/c']]);
    expect(restarts).toEqual([expect.objectContaining({ failure: 'protocol', relist: false })]);
  });

  it('stores and delivers an object that fails the schema as invalid, and resumes updates when it matches again', async () => {
    const api = new FakeApiServer();
    api.lists.push((res) => list(res, [widget('a', '1')], '1'));
    api.watches.push((res) =>
      stream(res, [line('MODIFIED', widget('a', '2', { size: 'big' })), line('ADDED', widget('b', '3')), line('ADDED', widget('never-valid', '4', {}))]),
    );
    const { inf, seen } = await informerOn(api);
    inf.start();

    await waitFor('never-valid delivered', () => seen.events.includes('invalid never-valid@4'));
    expect(seen.events).toEqual(['add a@1', 'invalid a@2', 'add b@3', 'invalid never-valid@4']);
    expect(seen.invalid[0]?.error.problems.map((p) => p.path)).toEqual(['spec.size']);
    expect(seen.invalid[0]?.obj).toMatchObject({ spec: { size: 'big' } });
    expect(inf.store.invalid('ns/a')?.object.metadata.resourceVersion).toBe('2');
    expect(inf.store.get('ns/a')?.metadata.resourceVersion).toBe('1'); // the last version that matched
    expect(inf.store.get('ns/never-valid')).toBeUndefined();
    expect(inf.stats.invalid).toBe(2);
    expect([inf.stats.failures.protocol, inf.stats.restarts]).toEqual([0, 0]); // no restart for a bad object

    inf.resync(); // invalid objects are delivered again on a resync
    expect(seen.events.splice(4).sort()).toEqual(['invalid a@2', 'invalid never-valid@4', 'update a@1', 'update b@3']);

    api.send(line('MODIFIED', widget('a', '5', { size: 3 })));
    await waitFor('a valid again', () => seen.events.includes('update a@5'));
    expect(seen.updates.at(-1)?.old.metadata.resourceVersion).toBe('1');
    expect([inf.store.invalid('ns/a'), inf.store.get('ns/a')?.spec.size]).toEqual([undefined, 3]);
  });

  it('delivers an update that carries a field the schema does not know (a CRD upgraded before this code)', async () => {
    const api = new FakeApiServer();
    api.lists.push((res) => list(res, [widget('a', '1')], '1'));
    api.watches.push((res) => stream(res, [line('MODIFIED', widget('a', '2', { size: 2, newField: 'x' }))]));
    const { inf, seen } = await informerOn(api);
    inf.start();

    await waitFor('the update', () => seen.updates.length === 1);
    expect(seen.updates[0]?.obj.spec).toEqual({ size: 2, newField: 'x' });
    expect(inf.store.get('ns/a')?.spec).toEqual({ size: 2, newField: 'x' });
    expect([inf.stats.invalid, seen.invalid]).toEqual([0, []]);
  });

  it('stores and delivers what the transform returns, for listed, watched and deleted objects', async () => {
    const api = new FakeApiServer();
    const fat = (name: string, rv: string): Record<string, unknown> => ({
      ...widget(name, rv, { size: Number(rv) }),
      metadata: { namespace: 'ns', name, resourceVersion: rv, managedFields: [{ manager: 'kubectl' }] },
    });
    api.lists.push((res) => list(res, [fat('a', '1')], '1'));
    api.watches.push((res) => stream(res, [line('MODIFIED', fat('a', '2')), line('ADDED', fat('b', '3')), line('DELETED', fat('b', '4'))]));
    const thin = (w: Widget): Widget => ({
      ...w,
      metadata: { name: w.metadata.name, namespace: w.metadata.namespace, resourceVersion: w.metadata.resourceVersion },
    });
    const { inf, seen } = await informerOn(api, { transform: thin });
    const deleted: Widget[] = [];
    inf.on('delete', (o) => void deleted.push(o));
    inf.start();

    await waitFor('b deleted', () => seen.events.includes('delete b'));
    expect(seen.events).toEqual(['add a@1', 'update a@2', 'add b@3', 'delete b']);
    expect([inf.store.get('ns/a')?.metadata, inf.store.get('ns/a')?.spec]).toEqual([{ name: 'a', namespace: 'ns', resourceVersion: '2' }, { size: 2 }]);
    expect(seen.updates[0]?.old.metadata).not.toHaveProperty('managedFields');
    expect(deleted[0]?.metadata).toEqual({ name: 'b', namespace: 'ns', resourceVersion: '4' });
  });

  it('relists after a 410 in the middle of a watch and deletes what vanished meanwhile', async () => {
    const api = new FakeApiServer();
    api.lists.push((res) => list(res, [widget('a', '5'), widget('b', '5')], '5'));
    api.watches.push((res) => stream(res, [line('ADDED', widget('c', '6')), line('ERROR', { kind: 'Status', code: 410, reason: 'Expired' })]));
    api.lists.push((res) => list(res, [widget('a', '5'), widget('c', '7')], '8'));
    const { logger, restarts } = capturingLogger();
    const { inf, seen } = await informerOn(api, { logger });
    inf.start();

    await waitFor('the watch after the relist', () => api.watchCalls.length === 2);
    expect(seen.events).toEqual(['add a@5', 'add b@5', 'add c@6', 'update c@7', 'delete b']);
    expect(api.watchCalls.map((q) => q.get('resourceVersion'))).toEqual(['5', '8']);
    expect([inf.stats.lists, inf.stats.failures.gone]).toEqual([2, 1]);
    expect(restarts).toEqual([expect.objectContaining({ failure: 'gone', relist: true })]);
  });

  it('stores each page of a chunked list before it asks for the next, and watches from the resourceVersion of the last page', async () => {
    const api = new FakeApiServer();
    let secondPage: (() => void) | undefined;
    api.lists.push((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'WidgetList', metadata: { resourceVersion: '5', continue: 'page-2' }, items: [widget('a', '5'), widget('b', '5')] }));
    });
    api.lists.push((res) => (secondPage = () => list(res, [widget('c', '5')], '5')));
    const { inf, seen } = await informerOn(api);
    inf.start();

    await waitFor('the second page asked for', () => secondPage !== undefined);
    expect([seen.events, inf.stats.lists]).toEqual([['add a@5', 'add b@5'], 0]);
    secondPage?.();
    await waitFor('the watch', () => api.watchCalls.length === 1);
    expect(seen.events).toEqual(['add a@5', 'add b@5', 'add c@5']);
    expect([api.listCalls.map((q) => q.get('continue')), api.watchCalls[0]?.get('resourceVersion'), inf.stats.lists]).toEqual([[null, 'page-2'], '5', 1]);
  });

  it('waits at least what a 429 Retry-After asks, counts it as throttled, and retries a 503 with backoff', async () => {
    const api = new FakeApiServer();
    api.lists.push((res) => status(res, 429, 'TooManyRequests', { 'Retry-After': '1' }));
    api.lists.push((res) => list(res, [widget('a', '1')], '1'));
    api.watches.push((res) => status(res, 503, 'ServiceUnavailable'));
    api.watches.push((res) => stream(res, [line('ADDED', widget('b', '2'))]));
    const { logger, restarts } = capturingLogger();
    const { inf, seen } = await informerOn(api, { logger });
    inf.start();

    await waitFor('b added', () => seen.events.includes('add b@2'));
    expect(seen.events).toEqual(['add a@1', 'add b@2']);
    expect(inf.stats.failures).toMatchObject({ throttled: 1, unavailable: 1 });
    expect(restarts.map((r) => r['failure'])).toEqual(['throttled', 'unavailable']);
    expect(restarts[0]?.['delayMs']).toBeGreaterThanOrEqual(1000);
    expect(restarts[1]?.['delayMs']).toBeLessThanOrEqual(5);
    expect(api.watchCalls.map((q) => q.get('resourceVersion'))).toEqual(['1', '1']);
  });
});

describe('informer resync and handlers', () => {
  it('re-delivers every stored object as an update of itself every resync period', async () => {
    const api = new FakeApiServer();
    api.lists.push((res) => list(res, [widget('a', '1'), widget('b', '1')], '1'));
    const { inf, seen } = await informerOn(api, { resyncMs: 20 });
    inf.start();

    await waitFor('two resyncs', () => inf.stats.resyncs >= 2);
    const resynced = seen.updates.filter((u) => u.obj === u.old).map((u) => u.obj.metadata.name);
    expect(resynced.slice(0, 4).sort()).toEqual(['a', 'a', 'b', 'b']);
    expect(seen.updates.every((u) => u.obj === inf.store.get(`ns/${u.obj.metadata.name}`))).toBe(true);
  });

  it('unregisters exactly one handler however often its unsubscribe is called', async () => {
    const api = new FakeApiServer();
    api.lists.push((res) => list(res, [widget('a', '1')], '1'));
    const { inf } = await informerOn(api);
    const calls: string[] = [];
    const offFirst = inf.on('add', () => void calls.push('first'));
    inf.on('add', () => void calls.push('second'));
    inf.on('add', () => void calls.push('third'));
    offFirst();
    offFirst();
    inf.start();
    await inf.synced;
    expect(calls).toEqual(['second', 'third']);
  });

  it('stops while waiting for its first sync when resync is on', async () => {
    const api = new FakeApiServer();
    api.lists.push(() => undefined); // the list never answers
    const { inf } = await informerOn(api, { resyncMs: 10 });
    inf.start();
    await waitFor('the list request', () => api.listCalls.length === 1);
    let stopped = false;
    void inf.stop().then(() => (stopped = true));
    await waitFor('stop() to resolve', () => stopped);
    await expect(inf.synced).rejects.toThrow('stopped');
  });
});
