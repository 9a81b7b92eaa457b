/**
 * The internal VM has two writers in this process (the VM reconciler: spec, power requests; the
 * operation reconciler: start/restart markers, runStrategy) and KubeVirt beside them. Every write of
 * theirs is conditional on the version it was decided on: a decision made on a stale copy is refused
 * with a conflict (and made again on fresh state) instead of overwriting what another writer did.
 * The apiserver is played by an in-memory kind (merge patches, resourceVersion preconditions).
 */
import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine } from '../../../shared/api/internal/resources.js';
import { ConflictError } from '../../../shared/errors/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { Expectations } from '../engine/expectations.js';
import { handlerContext, inMemoryDeps } from '../testing/in-memory.js';
import { powerStateHandler } from './vm/handlers/power-state.js';
import type { VMState } from './vm/state.js';
import type { OpContext } from './vmop/operation.js';
import { startOperation, stopOperation } from './vmop/power-ops.js';

const KEY = 'ns/vm';
const kvvm: InternalVirtualMachine = {
  apiVersion: 'internal.virtualization.deckhouse.io/v1',
  kind: 'InternalVirtualizationVirtualMachine',
  metadata: { namespace: 'ns', name: 'vm', annotations: {} },
  spec: { runStrategy: 'Always', template: {} },
  status: {},
} as unknown as InternalVirtualMachine;

function world() {
  const { deps, kinds } = inMemoryDeps({ seed: { kvvms: [kvvm] } });
  const current = (): InternalVirtualMachine => structuredClone(kinds.kvvms.stored(KEY) as InternalVirtualMachine);
  return { deps, kvvms: kinds.kvvms, current };
}

const ctx = handlerContext();

function vmState(kv: InternalVirtualMachine, power: VMState['power']): VMState {
  return { key: KEY, obj: {} as VMState['obj'], status: {}, waitingFor: [], power, startPending: false, kvvm: kv, kvvmi: undefined };
}

describe('writers of the shared internal VM', () => {
  it('refuses a start request decided on a copy older than what KubeVirt or an operation wrote since', async () => {
    const { deps, kvvms, current } = world();
    const stale = current(); // the VM reconciler's view: no request pending
    kvvms.writeByOther(KEY, { status: { stateChangeRequests: [{ action: 'Start' }] } }); // a request already made, not consumed yet
    const handler = powerStateHandler(deps, new Expectations<string>(60_000));

    await expect(handler.handle(vmState(stale, { kind: 'start', why: 'runPolicy AlwaysOn' }), ctx)).rejects.toBeInstanceOf(ConflictError);
    expect(current().status?.stateChangeRequests).toEqual([{ action: 'Start' }]);
    const afterRefusal = current().metadata.resourceVersion;

    // Made again on the fresh copy, the decision goes through (here: the request stands, written once more).
    await handler.handle(vmState(current(), { kind: 'start', why: 'runPolicy AlwaysOn' }), ctx);
    expect(current().metadata.resourceVersion).not.toBe(afterRefusal);
    expect(current().status?.stateChangeRequests).toEqual([{ action: 'Start' }]);
  });

  it('refuses an operation’s start marker on a stale internal VM, and sets it on the fresh one', async () => {
    const { deps, kvvms, current } = world();
    const stale = current();
    kvvms.writeByOther(KEY, { spec: { runStrategy: 'Manual' } }); // the VM reconciler applied a new spec
    const op = (kv: InternalVirtualMachine): OpContext =>
      ({ deps, vmop: { metadata: { uid: 'op-uid' } }, vm: {}, kvvm: kv, kvvmi: undefined, signal: ctx.signal, log: rootLogger }) as unknown as OpContext;

    await expect(startOperation.signal(op(stale))).rejects.toBeInstanceOf(ConflictError);
    expect(current().metadata.annotations).toEqual({});
    await expect(startOperation.signal(op(current()))).resolves.toBeUndefined();
    expect(current().metadata.annotations).toEqual({ 'virtualization.deckhouse.io/vm-start-requested': 'op-uid' });
    expect(current().spec.runStrategy).toBe('Manual');
  });

  it('refuses a stop operation’s runStrategy change on a stale internal VM', async () => {
    const { deps, kvvms, current } = world();
    const stale = current();
    kvvms.writeByOther(KEY, { metadata: { annotations: { 'virtualization.deckhouse.io/vm-start-requested': 'other' } } });
    const c = {
      deps,
      vmop: { spec: {} },
      vm: { metadata: { namespace: 'ns', name: 'vm' } },
      kvvm: stale,
      kvvmi: undefined,
      signal: ctx.signal,
      log: rootLogger,
    };
    await expect(stopOperation.signal(c as unknown as OpContext)).rejects.toBeInstanceOf(ConflictError);
    expect(current().spec.runStrategy).toBe('Always');
  });
});
