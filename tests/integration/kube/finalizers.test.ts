import { describe, expect, it } from '@jest/globals';
import { addFinalizer, hasControllerReference, hasFinalizer, removeFinalizer, withControllerReference } from '../../../shared/kube/index.js';
import { newWidget, useWidgets } from './fixtures.js';

const t = useWidgets('kube-fin');

describe('finalizer helpers against a real apiserver', () => {
  it('adds a finalizer once however often it is asked', async () => {
    const w = await t.api.create(newWidget(t.ns, 'once'));
    const first = await addFinalizer(t.api, w, 'test.virtualization.example/cleanup');
    const second = await addFinalizer(t.api, first, 'test.virtualization.example/cleanup');
    const third = await addFinalizer(t.api, w, 'test.virtualization.example/cleanup'); // stale copy
    expect(third.metadata.finalizers).toEqual(['test.virtualization.example/cleanup']);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
  });

  it('keeps both finalizers when two writers add different ones from the same stale copy', async () => {
    const w = await t.api.create(newWidget(t.ns, 'race'));
    await Promise.all([addFinalizer(t.api, w, 'a.example/f'), addFinalizer(t.api, w, 'b.example/f')]);
    const stored = await t.api.get({ namespace: t.ns, name: 'race' });
    expect([...(stored.metadata.finalizers ?? [])].sort()).toEqual(['a.example/f', 'b.example/f']);
  });

  it('removes only its own finalizer, idempotently, and deletion then completes', async () => {
    const w = await t.api.create(newWidget(t.ns, 'finish'));
    const both = await addFinalizer(t.api, await addFinalizer(t.api, w, 'mine.example/f'), 'theirs.example/f');
    await t.api.delete({ namespace: t.ns, name: 'finish' });
    const deleting = await t.api.get({ namespace: t.ns, name: 'finish' });
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    const without = await removeFinalizer(t.api, both, 'mine.example/f'); // stale copy: retried on fresh state
    expect(without.metadata.finalizers).toEqual(['theirs.example/f']);
    expect(hasFinalizer(await removeFinalizer(t.api, without, 'mine.example/f'), 'mine.example/f')).toBe(false);
    await removeFinalizer(t.api, without, 'theirs.example/f');
    await expect(t.api.get({ namespace: t.ns, name: 'finish' })).rejects.toMatchObject({ status: 404 });
  });

  it('writes a controller ownerReference that the apiserver keeps', async () => {
    const owner = await t.api.create(newWidget(t.ns, 'owner'));
    const owned = await t.api.create(newWidget(t.ns, 'owned'));
    const refs = withControllerReference(owned, owner);
    const patched = await t.api.mergePatch(
      { namespace: t.ns, name: 'owned' },
      { metadata: { ownerReferences: refs, resourceVersion: owned.metadata.resourceVersion } },
    );
    expect(hasControllerReference(patched, owner)).toBe(true);
    expect(patched.metadata.ownerReferences).toEqual([
      { apiVersion: 'test.virtualization.example/v1', kind: 'Widget', name: 'owner', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
  });
});
