import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../shared/kube/index.js';
import type { HandlerContext, ReconcileState } from '../engine/reconciler.js';
import { InMemoryKind, handlerContext } from '../testing/in-memory.js';
import { protectionHandler } from './protection.js';

const FINALIZER = 'example.io/cleanup';
type Thing = KubeObject & { spec?: { users?: number } };
type State = ReconcileState<Thing, object>;

interface World {
  kind: InMemoryKind<Thing>;
  released: string[];
  run(): Promise<{ state: State; outcome: unknown }>;
}

/** One object `a` (seeded with `finalizers`), deleted when `deleting`, and a protection handler over it. */
function world(finalizers: string[], deleting: boolean, release?: () => Promise<void>): World {
  const kind = new InMemoryKind<Thing>('Thing');
  kind.seed([{ apiVersion: 'v1', kind: 'Thing', metadata: { name: 'a', namespace: 'ns', finalizers }, spec: { users: 0 } }]);
  const released: string[] = [];
  const handler = protectionHandler<Thing, State>({
    finalizer: FINALIZER,
    client: kind,
    cache: kind.cache,
    heldBy: (s) => (s.obj.spec?.users ?? 0) > 0,
    release: async (s, ctx: HandlerContext) => {
      expect(ctx.signal.aborted).toBe(false);
      released.push(s.obj.metadata.name ?? '');
      await release?.();
    },
  });
  return {
    kind,
    released,
    async run() {
      if (deleting) await kind.delete({ namespace: 'ns', name: 'a' });
      const obj = kind.stored('ns/a');
      if (obj === undefined) throw new Error('a is gone before the handler ran');
      const state: State = { obj, status: {} };
      const outcome = await handler.handle(state, handlerContext());
      return { state, outcome };
    },
  };
}

describe('the shared protection handler', () => {
  it('adds the finalizer to a live object once, and lets the chain go on', async () => {
    const w = world([], false);
    const { state, outcome } = await w.run();
    expect(outcome).toBeUndefined();
    expect(state.gone).toBeUndefined();
    expect(w.kind.stored('ns/a')?.metadata.finalizers).toEqual([FINALIZER]);
    expect(w.kind.cache.get('ns/a')?.metadata.finalizers).toEqual([FINALIZER]);
    const writes = w.kind.calls.length;
    const again = await protectionHandler<Thing, State>({ finalizer: FINALIZER, client: w.kind, cache: w.kind.cache }).handle(
      { obj: w.kind.stored('ns/a') as Thing, status: {} },
      handlerContext(),
    );
    expect(again).toBeUndefined();
    expect(w.kind.calls.length).toBe(writes);
  });

  it('keeps the finalizer of a deleted object while something holds it, and releases nothing', async () => {
    const w = world([FINALIZER], true);
    w.kind.writeByOther('ns/a', { spec: { users: 1 } });
    const { state, outcome } = await w.run();
    expect(outcome).toEqual({ stop: true });
    expect(state.gone).toBeUndefined();
    expect(w.released).toEqual([]);
    expect(w.kind.stored('ns/a')?.metadata.finalizers).toEqual([FINALIZER]);
  });

  it('asks for another look after heldRecheckMs while held, when the holders do not wake the object', async () => {
    const kind = new InMemoryKind<Thing>('Thing');
    kind.seed([{ apiVersion: 'v1', kind: 'Thing', metadata: { name: 'a', namespace: 'ns', finalizers: [FINALIZER] }, spec: { users: 2 } }]);
    await kind.delete({ namespace: 'ns', name: 'a' });
    const handler = protectionHandler<Thing, State>({
      finalizer: FINALIZER,
      client: kind,
      cache: kind.cache,
      heldBy: (s) => (s.obj.spec?.users ?? 0) > 0,
      heldRecheckMs: 1000,
    });
    const outcome = await handler.handle({ obj: kind.stored('ns/a') as Thing, status: {} }, handlerContext());
    expect(outcome).toEqual({ stop: true, requeueAfterMs: 1000 });
    expect(kind.stored('ns/a')?.metadata.finalizers).toEqual([FINALIZER]);
  });

  it('releases, then removes the finalizer of a deleted object nothing holds, so the apiserver lets it go', async () => {
    const w = world([FINALIZER], true);
    const { state, outcome } = await w.run();
    expect(outcome).toEqual({ stop: true });
    expect(state.gone).toBe(true);
    expect(w.released).toEqual(['a']);
    expect(w.kind.stored('ns/a')).toBeUndefined();
  });

  it('keeps the finalizer when the release fails, so the next pass tries again', async () => {
    const w = world([FINALIZER], true, () => Promise.reject(new Error('helper pod still there')));
    await expect(w.run()).rejects.toThrow('helper pod still there');
    expect(w.kind.stored('ns/a')?.metadata.finalizers).toEqual([FINALIZER]);
  });

  it('releases a deleted object that another finalizer keeps, without writing ours', async () => {
    const w = world(['someone.else/keep'], true);
    const before = w.kind.callsOf('jsonPatch').length;
    const { state } = await w.run();
    expect(w.released).toEqual(['a']);
    expect(state.gone).toBe(true);
    expect(w.kind.callsOf('jsonPatch').length).toBe(before);
    expect(w.kind.stored('ns/a')?.metadata.finalizers).toEqual(['someone.else/keep']);
  });
});
