/** The validation pipeline around the checks: kind, schema, operations, lookup failures and bugs. */
import { describe, expect, it } from '@jest/globals';
import { validate } from './admit.js';
import type { Check } from './rules/check.js';
import { virtualMachineValidator } from './rules/virtualmachine/index.js';
import type { Validator } from './rules/validator.js';
import { FakeLookups, context, emptyWorld } from './testing/fake-lookups.js';
import { request, typed, vm } from './testing/objects.js';

const lookups = (): FakeLookups => {
  const w = emptyWorld();
  w.classes.push(typed.vmClass());
  return new FakeLookups(w);
};

describe('validate', () => {
  it('denies a request for another kind than the webhook admits', async () => {
    const { decision } = await validate(
      virtualMachineValidator,
      request(vm(), { kind: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualDisk' } }),
      context(lookups()),
    );
    expect(decision).toEqual({
      allowed: false,
      violations: [
        { path: 'kind', message: 'this webhook admits virtualization.deckhouse.io/* VirtualMachine, not virtualization.deckhouse.io/v1alpha2 VirtualDisk' },
      ],
      warnings: [],
    });
  });

  it('denies an object of another kind sent to this path, naming the field', async () => {
    const disk = { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualDisk', metadata: { name: 'd' }, spec: {} };
    const req = request(disk, { kind: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachine' } });
    const { decision } = await validate(virtualMachineValidator, req, context(lookups()));
    expect(decision.allowed).toBe(false);
    expect(decision.violations.map((v) => v.path)).toEqual(expect.arrayContaining(['kind', 'spec.cpu', 'spec.blockDeviceRefs']));
  });

  it('reports every schema problem at once with its path', async () => {
    const bad = vm((o) => void ((o.spec.cpu.cores = 0), (o.spec.blockDeviceRefs = [])));
    const { decision } = await validate(virtualMachineValidator, request(bad), context(lookups()));
    expect(decision.violations.map((v) => v.path)).toEqual(['spec.cpu.cores', 'spec.blockDeviceRefs']);
  });

  it('denies empty references naming each field, before any lookup runs', async () => {
    const l = lookups();
    const bad = vm(
      (o) =>
        void (
          (o.spec.virtualMachineIPAddressName = ''),
          (o.spec.blockDeviceRefs = [{ kind: 'VirtualDisk', name: '' }]),
          (o.spec.networks = [{ type: 'Main', virtualMachineMACAddressName: '' }])
        ),
    );
    const { decision } = await validate(virtualMachineValidator, request(bad), context(l));
    expect(decision.violations.map((v) => v.path)).toEqual([
      'spec.blockDeviceRefs[0].name',
      'spec.virtualMachineIPAddressName',
      'spec.networks[0].virtualMachineMACAddressName',
    ]);
    expect([...l.calls.keys()]).toEqual([]);
  });

  it('names the old object in problems with it', async () => {
    const old = vm((o) => void (o.spec.cpu.cores = 0));
    const { decision } = await validate(virtualMachineValidator, request(vm(), { oldObject: old }), context(lookups()));
    expect(decision.violations).toEqual([{ path: 'oldObject.spec.cpu.cores', message: expect.any(String) }]);
  });

  it('denies an UPDATE without its old object', async () => {
    const { decision } = await validate(virtualMachineValidator, request(vm(), { operation: 'UPDATE' }), context(lookups()));
    expect(decision.violations).toEqual([{ path: 'oldObject', message: 'is required' }]);
  });

  it('admits a DELETE without judging the object', async () => {
    const { decision } = await validate(
      virtualMachineValidator,
      request(null, { operation: 'DELETE', kind: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachine' } }),
      context(lookups()),
    );
    expect(decision.allowed).toBe(true);
  });

  it('denies naming the object it could not read, and still reports the other violations', async () => {
    const l = lookups();
    l.failing.add('attachments');
    const bad = vm((o) => void (o.metadata.name = 'x'.repeat(64)));
    const { decision } = await validate(virtualMachineValidator, request(bad), context(l));
    expect(decision.violations).toEqual(
      expect.arrayContaining([
        { path: 'metadata.name', message: 'must be no more than 63 characters (it has 64)' },
        {
          path: '',
          message: `cannot check that a VM has at most 16 block devices including attachments: could not read VirtualMachineBlockDeviceAttachments in ns1: connection refused`,
        },
      ]),
    );
  });

  it('turns a check that throws into a denial and hands the error back', async () => {
    const boom: Check<unknown> = {
      name: 'the test check holds',
      run: () => {
        throw new TypeError('bug');
      },
    };
    const validator: Validator<unknown> = { group: 'g', kind: 'K', parse: (raw) => ({ ok: true, value: raw }), checks: [boom] };
    const outcome = await validate(validator, request({ apiVersion: 'g/v1', kind: 'K' }), context(lookups()));
    expect(outcome.decision.violations).toEqual([{ path: '', message: 'internal error while checking that the test check holds: bug' }]);
    expect(outcome.failures).toEqual([{ check: 'the test check holds', error: expect.any(TypeError) }]);
  });
});
