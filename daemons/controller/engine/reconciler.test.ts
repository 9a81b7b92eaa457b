import { describe, expect, it } from '@jest/globals';
import { InvalidObjectError, type KubeObject } from '../../../shared/kube/index.js';
import { handlerChain, type ReconcileState } from './reconciler.js';

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
