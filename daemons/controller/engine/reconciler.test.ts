import { describe, expect, it } from '@jest/globals';
import { InvalidObjectError, type KubeObject } from '../../../shared/kube/index.js';
import { clone, handlerChain, type ReconcileState } from './reconciler.js';

type Obj = KubeObject & { status?: { phase?: string } };
type State = ReconcileState<Obj, { phase?: string }>;

function chain(invalid: InvalidObjectError | undefined): { run: () => Promise<unknown>; handled: string[]; writes: unknown[] } {
  const handled: string[] = [];
  const writes: unknown[] = [];
  const obj: Obj = { metadata: { namespace: 'ns', name: 'a', resourceVersion: '1' }, status: {} };
  const reconcile = handlerChain<Obj, { phase?: string }, State>({
    name: 't',
    load: () => obj,
    invalid: () => invalid,
    init: (o) => ({ obj: o, status: {} }),
    handlers: [{ name: 'phase', handle: (s) => void (handled.push('phase'), (s.status.phase = 'Ready')) }],
    statusOf: (o) => o.status,
    writeStatus: (_o, patch) => Promise.resolve(void writes.push(patch)),
  });
  return { run: () => reconcile('ns/a', new AbortController().signal), handled, writes };
}

describe('handlerChain', () => {
  it('runs the handlers and writes the status change once', async () => {
    const c = chain(undefined);
    await c.run();
    expect([c.handled, c.writes]).toEqual([['phase'], [{ phase: 'Ready' }]]);
  });

  it('does not reconcile an object whose latest version does not match the schema (no stale copy, no "gone")', async () => {
    const c = chain(new InvalidObjectError('Widget ns/a', [{ path: 'spec.size', message: 'expected number' }]));
    expect(await c.run()).toEqual({});
    expect([c.handled, c.writes]).toEqual([[], []]);
  });
});

describe('handlerChain settle', () => {
  it('settles the status after a handler stopped the chain, before the one write', async () => {
    const writes: unknown[] = [];
    const obj: Obj = { metadata: { namespace: 'ns', name: 'a', resourceVersion: '1' }, status: {} };
    const reconcile = handlerChain<Obj, { phase?: string }, State>({
      name: 't',
      load: () => obj,
      init: (o) => ({ obj: o, status: {} }),
      handlers: [
        { name: 'stop', handle: (s) => ((s.status.phase = 'pending'), { stop: true }) },
        { name: 'never', handle: (s) => void (s.status.phase = 'never') },
      ],
      settle: (s) => void (s.status.phase = s.status.phase?.toUpperCase()),
      statusOf: (o) => o.status,
      writeStatus: (_o, patch) => Promise.resolve(void writes.push(patch)),
    });
    await reconcile('ns/a', new AbortController().signal);
    expect(writes).toEqual([{ phase: 'PENDING' }]);
  });
});

describe('clone', () => {
  it('copies JSON data deeply: equal, and no object or array shared with the original', () => {
    const status = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ok', lastTransitionTime: null }],
      nested: { list: [1, 'two', true, null, [3]], empty: {} },
      cleared: undefined,
    };
    const copy = clone(status);
    expect(copy).toStrictEqual(status);
    expect(Object.keys(copy)).toEqual(['phase', 'conditions', 'nested', 'cleared']);
    copy.conditions[0].status = 'False';
    copy.nested.list.push(4);
    (copy.nested.list[4] as number[]).push(5);
    copy.nested.empty = { x: 1 };
    expect(status.conditions[0].status).toBe('True');
    expect(status.nested.list).toEqual([1, 'two', true, null, [3]]);
    expect(status.nested.empty).toEqual({});
  });

  it("keeps a field named __proto__ as a field (as JSON.parse made it), not as the copy's prototype", () => {
    const parsed = JSON.parse('{"spec":{"__proto__":{"polluted":true},"a":1}}') as { spec: Record<string, unknown> };
    const copy = clone(parsed);
    expect(Object.keys(copy.spec)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(copy.spec)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(copy.spec, '__proto__')?.value).toEqual({ polluted: true });
    expect((copy.spec as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('returns primitives, null and undefined as they are', () => {
    expect(clone(undefined)).toBeUndefined();
    expect(clone(null)).toBeNull();
    expect(clone('a')).toBe('a');
    expect(clone(0)).toBe(0);
  });
});
