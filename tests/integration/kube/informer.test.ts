import { afterEach, describe, expect, it } from '@jest/globals';
import { Informer, KubeClient, type ResourceClient } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace, startExtraApiServer } from '../../env/index.js';
import { newWidget, useWidgets, widgets, type Widget } from './fixtures.js';

const t = useWidgets();
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Seen {
  added: string[];
  updated: { name: string; phase: string | undefined }[];
  deleted: string[];
}

function informer(
  on: ResourceClient<Widget>,
  namespace: string,
  extra: Partial<ConstructorParameters<typeof Informer<Widget>>[0]> = {},
): { inf: Informer<Widget>; seen: Seen } {
  const inf = new Informer<Widget>({ client: on, namespace, backoff: { initialMs: 100, maxMs: 1000 }, ...extra });
  const seen: Seen = { added: [], updated: [], deleted: [] };
  inf.on('add', (w) => void seen.added.push(w.metadata.name ?? ''));
  inf.on('update', (w) => void seen.updated.push({ name: w.metadata.name ?? '', phase: w.status?.phase }));
  inf.on('delete', (w) => void seen.deleted.push(w.metadata.name ?? ''));
  cleanups.push(() => inf.stop());
  return { inf: inf.start(), seen };
}

describe('informer against a real apiserver', () => {
  it('lists existing objects, then sees adds, status updates and deletes', async () => {
    const ns = await freshNamespace('kube-inf');
    await t.api.create(newWidget(ns, 'before'));
    const { inf, seen } = informer(t.api, ns);
    await inf.synced;
    expect(seen.added).toEqual(['before']);

    await t.api.create(newWidget(ns, 'later'));
    await waitFor('add of later', () => seen.added.includes('later'));
    await t.api.patchStatus({ namespace: ns, name: 'later' }, { phase: 'Ready' });
    await waitFor('status update', () => seen.updated.some((u) => u.name === 'later' && u.phase === 'Ready'));
    expect(inf.store.get({ namespace: ns, name: 'later' })?.status?.phase).toBe('Ready');
    await t.api.delete({ namespace: ns, name: 'before' });
    await waitFor('delete of before', () => seen.deleted.includes('before'));
    expect(inf.store.keys()).toEqual([`${ns}/later`]);
  });

  it('relists on 410 Gone and emits deletes for objects that vanished meanwhile', async () => {
    const ns = await freshNamespace('kube-410');
    const kept = await t.api.create(newWidget(ns, 'kept'));
    const ghost: Widget = { ...newWidget(ns, 'ghost'), metadata: { namespace: ns, name: 'ghost', resourceVersion: '1' } };
    const stale: Widget = { ...kept, metadata: { ...kept.metadata, resourceVersion: '1' } };
    const { inf, seen } = informer(t.api, ns, { resumeFrom: { resourceVersion: '1', objects: [ghost, stale] } });

    await waitFor('delete of ghost after the relist', () => seen.deleted.includes('ghost'));
    expect(inf.stats.lists).toBe(1);
    expect(seen.updated.map((u) => u.name)).toEqual(['kept']);
    expect(seen.added).toEqual([]);
    await t.api.create(newWidget(ns, 'fresh'));
    await waitFor('add after the relist', () => seen.added.includes('fresh'));
  });

  it('survives its apiserver being killed mid-watch and catches up after the restart', async () => {
    const ns = await freshNamespace('kube-kill');
    const extra = await startExtraApiServer();
    cleanups.push(() => extra.stop());
    const extraClient = new KubeClient(extra.kubeConfig());
    cleanups.push(() => extraClient.close());
    await t.api.create(newWidget(ns, 'doomed'));
    const { inf, seen } = informer(widgets(extraClient), ns);
    await inf.synced;
    expect(seen.added).toEqual(['doomed']);

    await extra.kill();
    await t.api.delete({ namespace: ns, name: 'doomed' }); // through the main apiserver, same etcd
    await t.api.create(newWidget(ns, 'during'));
    await extra.restart();
    const restartedAt = Date.now();
    await t.api.create(newWidget(ns, 'after'));
    await waitFor('add of after', () => seen.added.includes('after'));
    const caughtUp = Date.now() - restartedAt;
    expect([...seen.added].sort()).toEqual(['after', 'doomed', 'during']); // a relist delivers in key order
    expect(seen.deleted).toEqual(['doomed']);
    expect(inf.stats.restarts).toBeGreaterThanOrEqual(1);
    process.stdout.write(`[kube] informer caught up ${caughtUp} ms after the apiserver restart (${inf.stats.restarts} restarts, ${inf.stats.lists} lists)\n`);
  });

  it('stops promptly and rejects synced when stopped before the first list', async () => {
    const ns = await freshNamespace('kube-stop');
    // Every slow way to stop takes minutes here (a retry after 10 min, a watch of 10 min), so that
    // stop() answering within the wait's deadline can only mean it cut everything short.
    const inf = new Informer<Widget>({ client: t.api, namespace: ns, backoff: { initialMs: 600_000, maxMs: 600_000 }, watchTimeoutSeconds: 600 });
    inf.start();
    let stopped = false;
    void inf.stop().then(() => (stopped = true));
    await waitFor('stop() to resolve', () => stopped);
    await expect(inf.synced).rejects.toThrow('stopped');
  });
});
