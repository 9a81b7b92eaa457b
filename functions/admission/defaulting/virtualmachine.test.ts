/** VirtualMachine defaulting: class, core fraction and network ids, returned as a JSON Patch of a changed copy. */
import { describe, expect, it } from '@jest/globals';
import { mutate } from '../mutate.js';
import { applyJsonPatch as applyPatch } from '../../../shared/kube/index.js';
import { FakeLookups, context, emptyWorld, type World } from '../testing/fake-lookups.js';
import { request, typed, vm, type VmIn } from '../testing/objects.js';
import { vmDefaulter } from '../webhooks.js';

function world(change?: (w: World) => void): World {
  const w = emptyWorld();
  w.classes.push(typed.vmClass());
  change?.(w);
  return w;
}

async function defaulted(object: VmIn, w: World = world(), lookups = new FakeLookups(w)) {
  const outcome = await mutate(vmDefaulter, request(object), context(lookups));
  return { ...outcome, result: applyPatch(object, outcome.patch) as VmIn };
}

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
    const { patch } = await defaulted(unnamed((o) => void (o.spec.virtualMachineClassName = 'generic')));
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
    const { decision, patch } = await defaulted(vm((o) => void (o.spec.networks = [{ type: 'Main', id: 1 }])));
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
