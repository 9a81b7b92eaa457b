/**
 * The internal VM has two writers in this process (the VM reconciler: spec, power requests; the
 * operation reconciler: start/restart markers, runStrategy) and KubeVirt beside them. Every write of
 * theirs is conditional on the version it was decided on: a decision made on a stale copy is refused
 * with a conflict (and made again on fresh state) instead of overwriting what another writer did.
 * The apiserver is played by one object with merge-patch and resourceVersion semantics.
 */
import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine } from '../../../shared/api/internal/resources.js';
import { ConflictError } from '../../../shared/errors/index.js';
import type { ObjectRef, PatchOptions } from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import type { Deps } from '../deps.js';
import { Expectations } from '../engine/expectations.js';
import type { HandlerContext } from '../engine/reconciler.js';
import { powerStateHandler } from './vm/handlers/power-state.js';
import type { VMState } from './vm/state.js';
import type { OpContext } from './vmop/operation.js';
import { startOperation, stopOperation } from './vmop/power-ops.js';

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** RFC 7386. */
function merge(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const out: Json = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

/** One stored object as the apiserver keeps it: merge patches, /status, resourceVersion preconditions. */
class StoredObject {
  writes = 0;
  constructor(public current: InternalVirtualMachine) {}

  /** Someone else writes (KubeVirt, the other reconciler): a new resourceVersion. */
  writeByOther(patch: Json, subresource?: 'status'): InternalVirtualMachine {
    return this.apply(patch, subresource);
  }

  readonly client = {
    mergePatch: (_ref: ObjectRef, patch: Json, opts: PatchOptions = {}): Promise<InternalVirtualMachine> => {
      const meta = patch['metadata'] as { resourceVersion?: string } | undefined;
      if (meta?.resourceVersion !== undefined && meta.resourceVersion !== this.current.metadata.resourceVersion) {
        return Promise.reject(new ConflictError('the object has been modified; please apply your changes to the latest version'));
      }
      return Promise.resolve(this.apply(patch, opts.subresource === 'status' ? 'status' : undefined));
    },
    patchStatus: (ref: ObjectRef, status: unknown): Promise<InternalVirtualMachine> => this.client.mergePatch(ref, { status }, { subresource: 'status' }),
  };

  private apply(patch: Json, subresource?: 'status'): InternalVirtualMachine {
    const { status, metadata, ...rest } = patch;
    const base = this.current as unknown as Json;
    const next = (subresource === 'status' ? merge(base, { status }) : merge(base, { ...rest, metadata: { ...(metadata as Json | undefined), resourceVersion: undefined } })) as Json;
    this.writes++;
    const rv = String(Number(this.current.metadata.resourceVersion) + 1);
    this.current = { ...(next as unknown as InternalVirtualMachine), metadata: { ...(next['metadata'] as InternalVirtualMachine['metadata']), resourceVersion: rv } };
    return structuredClone(this.current);
  }
}

const kvvmAt = (rv: string): InternalVirtualMachine =>
  ({
    apiVersion: 'internal.virtualization.deckhouse.io/v1',
    kind: 'InternalVirtualizationVirtualMachine',
    metadata: { namespace: 'ns', name: 'vm', resourceVersion: rv, annotations: {} },
    spec: { runStrategy: 'Always', template: {} },
    status: {},
  }) as unknown as InternalVirtualMachine;

function depsFor(kvvm: StoredObject): Deps {
  const remembered: InternalVirtualMachine[] = [];
  return {
    clients: { kvvms: kvvm.client, kvvmis: { delete: () => Promise.resolve(), mergePatch: () => Promise.resolve({}) } },
    caches: { kvvms: { remember: (o: InternalVirtualMachine) => (remembered.push(o), o) } },
  } as unknown as Deps;
}

const ctx: HandlerContext = { signal: new AbortController().signal, log: rootLogger, now: new Date() };

function vmState(kvvm: InternalVirtualMachine, power: VMState['power']): VMState {
  return { key: 'ns/vm', obj: {} as VMState['obj'], status: {}, waitingFor: [], power, startPending: false, kvvm, kvvmi: undefined };
}

describe('writers of the shared internal VM', () => {
  it('refuses a start request decided on a copy older than what KubeVirt or an operation wrote since', async () => {
    const stored = new StoredObject(kvvmAt('10'));
    const stale = structuredClone(stored.current); // the VM reconciler's view: no request pending
    stored.writeByOther({ status: { stateChangeRequests: [{ action: 'Start' }] } }, 'status'); // a request already made, not consumed yet
    const handler = powerStateHandler(depsFor(stored), new Expectations<string>(60_000));

    await expect(handler.handle(vmState(stale, { kind: 'start', why: 'runPolicy AlwaysOn' }), ctx)).rejects.toBeInstanceOf(ConflictError);
    expect(stored.current.status?.stateChangeRequests).toEqual([{ action: 'Start' }]);
    expect(stored.writes).toBe(1);

    // Made again on the fresh copy, the decision goes through (here: the request stands, written once more).
    await handler.handle(vmState(structuredClone(stored.current), { kind: 'start', why: 'runPolicy AlwaysOn' }), ctx);
    expect(stored.current.metadata.resourceVersion).toBe('12');
  });

  it('refuses an operation’s start marker on a stale internal VM, and sets it on the fresh one', async () => {
    const stored = new StoredObject(kvvmAt('10'));
    const stale = structuredClone(stored.current);
    stored.writeByOther({ spec: { runStrategy: 'Manual' } }); // the VM reconciler applied a new spec
    const op = (kvvm: InternalVirtualMachine): OpContext =>
      ({ deps: depsFor(stored), vmop: { metadata: { uid: 'op-uid' } }, vm: {}, kvvm, kvvmi: undefined, signal: ctx.signal, log: rootLogger }) as unknown as OpContext;

    await expect(startOperation.signal(op(stale))).rejects.toBeInstanceOf(ConflictError);
    expect(stored.current.metadata.annotations).toEqual({});
    await expect(startOperation.signal(op(structuredClone(stored.current)))).resolves.toBeUndefined();
    expect(stored.current.metadata.annotations).toEqual({ 'virtualization.deckhouse.io/vm-start-requested': 'op-uid' });
    expect(stored.current.spec.runStrategy).toBe('Manual');
  });

  it('refuses a stop operation’s runStrategy change on a stale internal VM', async () => {
    const stored = new StoredObject(kvvmAt('10'));
    const stale = structuredClone(stored.current);
    stored.writeByOther({ metadata: { annotations: { 'virtualization.deckhouse.io/vm-start-requested': 'other' } } });
    const c = { deps: depsFor(stored), vmop: { spec: {} }, vm: { metadata: { namespace: 'ns', name: 'vm' } }, kvvm: stale, kvvmi: undefined, signal: ctx.signal, log: rootLogger };
    await expect(stopOperation.signal(c as unknown as OpContext)).rejects.toBeInstanceOf(ConflictError);
    expect(stored.current.spec.runStrategy).toBe('Always');
  });
});
