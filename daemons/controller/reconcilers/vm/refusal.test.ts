/** Refusals of the internal VM: which errors are refusals, their message in the VM's words, and the per-VM backoff. */
import { describe, expect, it } from '@jest/globals';
import { ConflictError, KubeApiError, UnavailableError } from '../../../../shared/errors/index.js';
import { fingerprint, isRefusal, RefusalBackoff, refusalMessage } from './refusal.js';

const denied = (message: string, status = 422): KubeApiError =>
  new KubeApiError(`create InternalVirtualizationVirtualMachine ns/web: ${message}`, status, 'Invalid', { serverMessage: message });

describe('isRefusal', () => {
  it.each<[string, unknown, boolean]>([
    ['a webhook denial (422 Invalid)', denied('x'), true],
    ['a bad request (400)', denied('x', 400), true],
    ['a forbidden answer (403)', denied('x', 403), false],
    ['a conflict', new ConflictError('x'), false],
    ['an unavailable apiserver', new UnavailableError('x'), false],
    ['a plain Error', new Error('x'), false],
  ])('%s: %s', (_what, err, refusal) => {
    expect(isRefusal(err)).toBe(refusal);
  });
});

describe('refusalMessage', () => {
  it.each([
    [
      'admission webhook "virtualmachine-validator.kubevirt.io" denied the request: spec.template.spec.volumes[1].cloudInitNoCloud userdata exceeds 2048 byte limit. Should use UserDataSecretRef for larger data.',
      'KubeVirt refused the VM: Spec.provisioning.userData exceeds 2048 byte limit. Should use spec.provisioning.userDataRef for larger data.',
    ],
    [
      'admission webhook "virtualmachine-validator.kubevirt.io" denied the request: spec.template.spec.domain.machine.type is not supported: virt (allowed values: [q35*])',
      'KubeVirt refused the VM: The machine type (from spec.osType) is not supported: virt (allowed values: [q35*])',
    ],
    ['something KubeVirt says', 'KubeVirt refused the VM: Something KubeVirt says'],
  ])('says %j in the VM’s words', (server, said) => {
    expect(refusalMessage(denied(server))).toBe(said);
  });

  it('names the status when the apiserver said nothing', () => {
    expect(refusalMessage(new KubeApiError('', 400, undefined, { serverMessage: '' }))).toBe('KubeVirt refused the VM: Refused with HTTP 400');
  });
});

describe('RefusalBackoff', () => {
  const clock = { t: 0 };
  const backoff = (): RefusalBackoff => new RefusalBackoff({ baseMs: 1000, maxMs: 8000, now: () => clock.t });

  it('waits base × 2^n between refusals of the same object, up to the cap', () => {
    clock.t = 0;
    const b = backoff();
    const waits = [1, 2, 3, 4, 5].map(() => {
      const w = b.refused('ns/web', 'a', 'no');
      clock.t += w;
      return w;
    });
    expect(waits).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(b.refusals('ns/web')).toBe(5);
  });

  it('holds the same object back until its time, with the refusal’s message', () => {
    clock.t = 0;
    const b = backoff();
    b.refused('ns/web', 'a', 'why');
    clock.t = 400;
    expect(b.waiting('ns/web', 'a')).toEqual({ waitMs: 600, message: 'why' });
    clock.t = 1000;
    expect(b.waiting('ns/web', 'a')).toBeUndefined();
  });

  it('lets a changed object through at once and starts its count afresh', () => {
    clock.t = 0;
    const b = backoff();
    b.refused('ns/web', 'a', 'why');
    b.refused('ns/web', 'a', 'why');
    expect(b.waiting('ns/web', 'b')).toBeUndefined();
    expect(b.refused('ns/web', 'b', 'other')).toBe(1000);
  });

  it('forgets a VM on success, and VMs long gone on a later refusal', () => {
    clock.t = 0;
    const b = backoff();
    b.refused('ns/web', 'a', 'why');
    b.forget('ns/web');
    expect(b.waiting('ns/web', 'a')).toBeUndefined();
    b.refused('ns/old', 'a', 'why');
    clock.t = 100_000;
    b.refused('ns/new', 'a', 'why');
    expect(b.refusals('ns/old')).toBe(0);
  });
});

describe('fingerprint', () => {
  it('is stable for equal objects and differs for different ones', () => {
    expect(fingerprint({ a: 1 })).toBe(fingerprint({ a: 1 }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
  });
});
