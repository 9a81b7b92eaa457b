/** VirtualMachine defaulting: class, core fraction and network ids, returned as a JSON Patch of a changed copy. */
import { describe, expect, it } from '@jest/globals';
import { Finalizer } from '../../../shared/api/finalizers.js';
import { mutate } from '../mutate.js';
import { applyJsonPatch as applyPatch } from '../../../shared/kube/index.js';
import { FakeLookups, context, emptyWorld, type World } from '../testing/fake-lookups.js';
import { request, typed, vm, type RequestOptions, type VmIn } from '../testing/objects.js';
import { vmDefaulter } from '../webhooks.js';

function world(change?: (w: World) => void): World {
  const w = emptyWorld();
  w.classes.push(typed.vmClass());
  change?.(w);
  return w;
}

async function defaulted(object: VmIn, w: World = world(), lookups = new FakeLookups(w), opts: RequestOptions = {}) {
  const outcome = await mutate(vmDefaulter, request(object, opts), context(lookups));
  return { ...outcome, result: applyPatch(object, outcome.patch) as VmIn };
}

/** The same VM as an UPDATE (no finalizer is added then), to look at the other defaults alone. */
const onUpdate = (object: VmIn): RequestOptions => ({ operation: 'UPDATE', oldObject: object });

const unnamed = (change?: (o: VmIn) => void): VmIn =>
  vm((o) => {
    o.spec.virtualMachineClassName = '';
    delete o.spec.cpu.coreFraction;
    change?.(o);
  });

describe('VirtualMachine defaulting', () => {
  it('names the default class when the VM names none', async () => {
    const { decision, patch, result } = await defaulted(unnamed());
    expect(decision.allowed).toBe(true);
    expect(patch).toContainEqual({ op: 'replace', path: '/spec/virtualMachineClassName', value: 'generic' });
    expect(result.spec.virtualMachineClassName).toBe('generic');
  });

  it('denies a VM without a class when no class is the default', async () => {
    const w = world((x) => void (x.classes = [typed.vmClass((c) => void (c.metadata.annotations = {}))]));
    const { decision, patch } = await defaulted(unnamed(), w);
    expect(decision.allowed).toBe(false);
    expect(decision.violations).toEqual([{ path: 'spec.virtualMachineClassName', message: expect.stringContaining('no VirtualMachineClass is annotated') }]);
    expect(patch).toEqual([]);
  });

  it('denies a VM without a class when two classes claim to be the default, naming both', async () => {
    const w = world((x) => void x.classes.push(typed.vmClass((c) => void (c.metadata.name = 'second'))));
    const { decision } = await defaulted(unnamed(), w);
    expect(decision.violations[0]?.message).toMatch(/several VirtualMachineClasses are marked default \(generic, second\)/);
  });

  it("takes the core fraction from the matching policy's defaultCoreFraction", async () => {
    const w = world(
      (x) =>
        void (x.classes = [
          typed.vmClass((c) => void (c.spec.sizingPolicies = [{ cores: { min: 1, max: 4 }, coreFractions: [10, 100], defaultCoreFraction: 10 }])),
        ]),
    );
    const { result } = await defaulted(unnamed(), w);
    expect(result.spec.cpu.coreFraction).toBe('10%');
  });

  it('falls back to 100% when the policy has no default and allows it', async () => {
    const object = unnamed((o) => void (o.spec.virtualMachineClassName = 'generic'));
    const { patch } = await defaulted(object, world(), undefined, onUpdate(object));
    expect(patch).toEqual([{ op: 'add', path: '/spec/cpu/coreFraction', value: '100%' }]);
  });

  it('denies an empty core fraction when the policy neither has a default nor allows 100%', async () => {
    const w = world((x) => void (x.classes = [typed.vmClass((c) => void (c.spec.sizingPolicies = [{ cores: { min: 1, max: 4 }, coreFractions: [10, 50] }]))]));
    const { decision } = await defaulted(unnamed(), w);
    expect(decision.violations).toEqual([{ path: 'spec.cpu.coreFraction', message: expect.stringContaining('does not allow 100%') }]);
  });

  it('numbers networks: Main gets 1, the others the lowest free ids from 2', async () => {
    const object = vm(
      (o) =>
        void (o.spec.networks = [
          { type: 'Main' },
          { type: 'Network', name: 'a', id: 2 },
          { type: 'Network', name: 'b' },
          { type: 'ClusterNetwork', name: 'c' },
        ]),
    );
    const { result } = await defaulted(object);
    expect(result.spec.networks?.map((n) => n.id)).toEqual([1, 2, 3, 4]);
  });

  it('returns an empty patch for a VM that needs nothing', async () => {
    const object = vm((o) => {
      o.spec.networks = [{ type: 'Main', id: 1 }];
      o.metadata.finalizers = [Finalizer.vmCleanup];
    });
    const { decision, patch } = await defaulted(object);
    expect(decision.allowed).toBe(true);
    expect(patch).toEqual([]);
  });

  it('leaves the object it was given unchanged', async () => {
    const object = unnamed();
    const before = structuredClone(object);
    await defaulted(object);
    expect(object).toEqual(before);
  });

  it('denies with the name of what it could not read when a lookup fails', async () => {
    const lookups = new FakeLookups(world());
    lookups.failing.add('virtualMachineClasses');
    const { decision } = await defaulted(unnamed(), world(), lookups);
    expect(decision.allowed).toBe(false);
    expect(decision.violations[0]?.message).toMatch(/cannot finish defaulting VirtualMachine: could not read VirtualMachineClasses: connection refused/);
  });

  it('denies an object of another kind', async () => {
    const outcome = await mutate(
      vmDefaulter,
      request({ apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualDisk', metadata: { name: 'd' } }),
      context(),
    );
    expect(outcome.decision.violations).toEqual([{ path: 'kind', message: expect.stringContaining('not virtualization.deckhouse.io/v1alpha2 VirtualDisk') }]);
  });
});

describe('VirtualMachine defaulting: the cleanup finalizer on CREATE', () => {
  const named = (change?: (o: VmIn) => void): VmIn =>
    vm((o) => {
      o.spec.networks = [{ type: 'Main', id: 1 }];
      change?.(o);
    });
  /** The raw object as the apiserver may send it, finalizers of any shape. */
  const raw = (finalizers: unknown): VmIn => ({ ...named(), metadata: { ...named().metadata, finalizers } }) as unknown as VmIn;

  it("adds the controller's vm-cleanup finalizer to a new VM, so the controller need not write it", async () => {
    const { decision, patch, result } = await defaulted(named());
    expect(decision.allowed).toBe(true);
    // The name the controller keeps and removes (daemons/controller reconcilers/vm/handlers/deletion.ts).
    expect(Finalizer.vmCleanup).toBe('virtualization.deckhouse.io/vm-cleanup');
    expect(patch).toEqual([{ op: 'add', path: '/metadata/finalizers', value: [Finalizer.vmCleanup] }]);
    expect(result.metadata.finalizers).toEqual([Finalizer.vmCleanup]);
  });

  it("keeps the user's own finalizers and appends it after them", async () => {
    const { result } = await defaulted(named((o) => void (o.metadata.finalizers = ['example.com/keep'])));
    expect(result.metadata.finalizers).toEqual(['example.com/keep', Finalizer.vmCleanup]);
  });

  it('adds nothing when the VM already carries it', async () => {
    const { patch } = await defaulted(named((o) => void (o.metadata.finalizers = [Finalizer.vmCleanup, 'example.com/keep'])));
    expect(patch).toEqual([]);
  });

  it("adds it on CREATE only: an UPDATE that dropped it is the controller's to repair", async () => {
    const object = named();
    const { patch } = await defaulted(object, world(), undefined, onUpdate(object));
    expect(patch).toEqual([]);
  });

  it('adds it next to the other defaults in one patch', async () => {
    const { patch, result } = await defaulted(unnamed());
    expect(patch).toContainEqual({ op: 'add', path: '/metadata/finalizers', value: [Finalizer.vmCleanup] });
    expect(result.spec.virtualMachineClassName).toBe('generic');
    expect(result.spec.cpu.coreFraction).toBe('100%');
  });

  it('adds nothing to a VM it denies', async () => {
    const w = world((x) => void (x.classes = []));
    const { decision, patch } = await defaulted(unnamed(), w);
    expect(decision.allowed).toBe(false);
    expect(patch).toEqual([]);
  });

  it.each([
    ['a string', 'virtualization.deckhouse.io/vm-cleanup'],
    ['an object', { name: 'x' }],
    ['an array with a number', ['example.com/keep', 7]],
    ['a number', 42],
  ])('leaves finalizers that are %s alone (the apiserver answers the shape), still defaulting the rest', async (_what, finalizers) => {
    const object = raw(finalizers);
    (object.spec as { networks?: unknown }).networks = [{ type: 'Main' }];
    const { decision, patch, failures } = await defaulted(object);
    expect(failures).toEqual([]);
    expect(decision.allowed).toBe(true);
    expect(patch).toEqual([{ op: 'add', path: '/spec/networks/0/id', value: 1 }]);
  });

  it('treats null finalizers as none', async () => {
    const { patch } = await defaulted(raw(null));
    expect(patch).toEqual([{ op: 'replace', path: '/metadata/finalizers', value: [Finalizer.vmCleanup] }]);
  });

  it('leaves a VM without metadata alone', async () => {
    const object = { ...named(), metadata: 'broken' } as unknown as VmIn;
    const { decision, failures } = await defaulted(object);
    expect(failures).toEqual([]);
    expect(decision.allowed).toBe(true);
  });
});
