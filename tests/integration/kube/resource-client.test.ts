import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import { AlreadyExistsError, BadRequestError, ConflictError, KubeApiError, NotFoundError } from '../../../shared/errors/index.js';
import { InvalidObjectError } from '../../../shared/kube/index.js';
import { FIELD_MANAGER, newWidget, useWidgets, widgetDescriptor, type Widget } from './fixtures.js';

const t = useWidgets('kube-rc');

const managers = (w: Widget): string[] => ((w.metadata as { managedFields?: { manager: string }[] }).managedFields ?? []).map((f) => f.manager);

describe('typed resource client against a real apiserver', () => {
  it('creates, reads and lists a custom object, validated by its schema', async () => {
    const created = await t.api.create(newWidget(t.ns, 'a', 3));
    expect(created).toMatchObject({ apiVersion: 'test.virtualization.example/v1', kind: 'Widget', spec: { size: 3 } });
    expect(managers(created)).toEqual([FIELD_MANAGER]);
    expect((await t.api.get({ namespace: t.ns, name: 'a' })).metadata.uid).toBe(created.metadata.uid);
    const list = await t.api.list({ namespace: t.ns });
    expect(list.items.map((w) => w.metadata.name)).toEqual(['a']);
    expect(Number(list.resourceVersion)).toBeGreaterThanOrEqual(Number(created.metadata.resourceVersion));
  });

  it('lists every page when the list is chunked', async () => {
    for (const name of ['p1', 'p2', 'p3']) await t.api.create({ ...newWidget(t.ns, name), metadata: { namespace: t.ns, name, labels: { page: 'yes' } } });
    const list = await t.api.list({ namespace: t.ns, labelSelector: 'page=yes', pageSize: 1 });
    expect(list.items.map((w) => w.metadata.name).sort()).toEqual(['p1', 'p2', 'p3']);
  });

  it('maps a missing object to NotFoundError and a stale replace to ConflictError', async () => {
    await expect(t.api.get({ namespace: t.ns, name: 'missing' })).rejects.toBeInstanceOf(NotFoundError);
    const w = await t.api.create(newWidget(t.ns, 'stale'));
    await t.api.replace({ ...w, spec: { size: 2 } });
    await expect(t.api.replace({ ...w, spec: { size: 5 } })).rejects.toBeInstanceOf(ConflictError);
  });

  it('tells a create of a taken name (AlreadyExists) from a stale write (Conflict), both 409', async () => {
    const w = await t.api.create(newWidget(t.ns, 'taken'));
    const exists = await t.api.create(newWidget(t.ns, 'taken')).catch((e: unknown) => e);
    expect(exists).toBeInstanceOf(AlreadyExistsError);
    expect(exists).toMatchObject({ status: 409, reason: 'AlreadyExists' });
    await t.api.replace({ ...w, spec: { size: 2 } });
    const stale = await t.api
      .mergePatch({ namespace: t.ns, name: 'taken' }, { metadata: { resourceVersion: w.metadata.resourceVersion }, spec: { size: 3 } })
      .catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(ConflictError);
    expect(stale).not.toBeInstanceOf(AlreadyExistsError);
    expect(stale).toMatchObject({ status: 409, reason: 'Conflict' });
  });

  it('refuses an empty name instead of addressing the collection (a GET would list every object)', async () => {
    await t.api.create(newWidget(t.ns, 'only'));
    const read = await t.api.get({ namespace: t.ns, name: '' }).catch((e: unknown) => e);
    expect(read).toBeInstanceOf(BadRequestError);
    expect((read as Error).message).toBe('get Widget: an empty name addresses no object');
    await expect(t.api.delete({ namespace: t.ns, name: '' })).rejects.toBeInstanceOf(BadRequestError);
    await expect(t.api.mergePatch({ namespace: t.ns, name: '' }, { spec: { size: 9 } })).rejects.toBeInstanceOf(BadRequestError);
    expect((await t.api.get({ namespace: t.ns, name: 'only' })).spec).toEqual({ size: 1 });
  });

  it('maps a validation failure to KubeApiError with status 422 and reason Invalid', async () => {
    const bad = { metadata: { namespace: t.ns, name: 'bad' }, spec: { size: -1 } };
    await expect(t.api.create(bad)).rejects.toMatchObject({ constructor: KubeApiError, status: 422, reason: 'Invalid' });
  });

  it('applies merge and JSON patches under the field manager', async () => {
    await t.api.create(newWidget(t.ns, 'patched'));
    const merged = await t.api.mergePatch({ namespace: t.ns, name: 'patched' }, { spec: { color: 'red' } }, { fieldManager: 'other-manager' });
    expect(merged.spec).toEqual({ size: 1, color: 'red' });
    expect(managers(merged)).toContain('other-manager');
    const ops = [
      { op: 'test' as const, path: '/spec/color', value: 'red' },
      { op: 'replace' as const, path: '/spec/size', value: 9 },
    ];
    expect((await t.api.jsonPatch({ namespace: t.ns, name: 'patched' }, ops)).spec.size).toBe(9);
    await expect(t.api.jsonPatch({ namespace: t.ns, name: 'patched' }, [{ op: 'test', path: '/spec/color', value: 'blue' }])).rejects.toMatchObject({
      status: 422,
    });
  });

  it('server-side applies and reports a conflict with another manager unless forced', async () => {
    const intent = { metadata: { namespace: t.ns, name: 'applied' }, spec: { size: 4 } };
    expect((await t.api.apply(intent)).spec.size).toBe(4);
    const rival = { ...intent, spec: { size: 5 } };
    await expect(t.api.apply(rival, { fieldManager: 'rival' })).rejects.toBeInstanceOf(ConflictError);
    expect((await t.api.apply(rival, { fieldManager: 'rival', force: true })).spec.size).toBe(5);
  });

  it('writes status only through the /status subresource', async () => {
    const w = await t.api.create(newWidget(t.ns, 'status'));
    const updated = await t.api.patchStatus({ namespace: t.ns, name: 'status' }, { phase: 'Ready', observedGeneration: w.metadata.generation });
    expect(updated.status).toEqual({ phase: 'Ready', observedGeneration: 1 });
    expect(updated.metadata.generation).toBe(1);
    const viaMain = await t.api.mergePatch({ namespace: t.ns, name: 'status' }, { status: { phase: 'Ignored' } });
    expect(viaMain.status?.phase).toBe('Ready');
  });

  it('deletes with a uid precondition and reports a second delete as NotFoundError', async () => {
    const w = await t.api.create(newWidget(t.ns, 'gone'));
    await expect(t.api.delete({ namespace: t.ns, name: 'gone' }, { preconditions: { uid: 'not-the-uid' } })).rejects.toBeInstanceOf(ConflictError);
    await t.api.delete({ namespace: t.ns, name: 'gone' }, { preconditions: { uid: w.metadata.uid ?? '' } });
    await expect(t.api.delete({ namespace: t.ns, name: 'gone' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('names the object and field when a stored object does not match the schema', async () => {
    await t.api.create(newWidget(t.ns, 'colorless'));
    const strict = t.client.resource(
      widgetDescriptor,
      z.looseObject({ metadata: ObjectMetaSchema, spec: z.object({ size: z.number(), color: z.string() }) }),
      FIELD_MANAGER,
    );
    const err = await strict.get({ namespace: t.ns, name: 'colorless' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidObjectError);
    expect((err as InvalidObjectError).message).toContain(`Widget ${t.ns}/colorless`);
    expect((err as InvalidObjectError).problems.map((p) => p.path)).toEqual(['spec.color']);
  });
});
