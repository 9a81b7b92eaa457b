import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  addFinalizer,
  hasControllerReference,
  hasFinalizer,
  removeFinalizer,
  withControllerReference,
  type KubeClient,
  type ResourceClient,
} from '../../../shared/kube/index.js';
import { freshNamespace } from '../../env/index.js';
import { ensureWidgetCrd, mainClient, newWidget, widgets, type Widget } from './fixtures.js';

let client: KubeClient;
let api: ResourceClient<Widget>;
let ns: string;

beforeAll(async () => {
  client = mainClient();
  await ensureWidgetCrd(client);
  api = widgets(client);
  ns = await freshNamespace('kube-fin');
});

afterAll(() => client.close());

describe('finalizer helpers against a real apiserver', () => {
  it('adds a finalizer once however often it is asked', async () => {
    const w = await api.create(newWidget(ns, 'once'));
    const first = await addFinalizer(api, w, 'test.virtualization.example/cleanup');
    const second = await addFinalizer(api, first, 'test.virtualization.example/cleanup');
    const third = await addFinalizer(api, w, 'test.virtualization.example/cleanup'); // stale copy
    expect(third.metadata.finalizers).toEqual(['test.virtualization.example/cleanup']);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
  });

  it('keeps both finalizers when two writers add different ones from the same stale copy', async () => {
    const w = await api.create(newWidget(ns, 'race'));
    await Promise.all([addFinalizer(api, w, 'a.example/f'), addFinalizer(api, w, 'b.example/f')]);
    const stored = await api.get({ namespace: ns, name: 'race' });
    expect([...(stored.metadata.finalizers ?? [])].sort()).toEqual(['a.example/f', 'b.example/f']);
  });

  it('removes only its own finalizer, idempotently, and deletion then completes', async () => {
    const w = await api.create(newWidget(ns, 'finish'));
    const both = await addFinalizer(api, await addFinalizer(api, w, 'mine.example/f'), 'theirs.example/f');
    await api.delete({ namespace: ns, name: 'finish' });
    const deleting = await api.get({ namespace: ns, name: 'finish' });
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    const without = await removeFinalizer(api, both, 'mine.example/f'); // stale copy: retried on fresh state
    expect(without.metadata.finalizers).toEqual(['theirs.example/f']);
    expect(hasFinalizer(await removeFinalizer(api, without, 'mine.example/f'), 'mine.example/f')).toBe(false);
    await removeFinalizer(api, without, 'theirs.example/f');
    await expect(api.get({ namespace: ns, name: 'finish' })).rejects.toMatchObject({ status: 404 });
  });

  it('writes a controller ownerReference that the apiserver keeps', async () => {
    const owner = await api.create(newWidget(ns, 'owner'));
    const owned = await api.create(newWidget(ns, 'owned'));
    const refs = withControllerReference(owned, owner);
    const patched = await api.mergePatch(
      { namespace: ns, name: 'owned' },
      { metadata: { ownerReferences: refs, resourceVersion: owned.metadata.resourceVersion } },
    );
    expect(hasControllerReference(patched, owner)).toBe(true);
    expect(patched.metadata.ownerReferences).toEqual([
      { apiVersion: 'test.virtualization.example/v1', kind: 'Widget', name: 'owner', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
  });
});
