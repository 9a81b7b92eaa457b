import { describe, expect, it } from '@jest/globals';
import type { ResourceClaim } from '../../../shared/api/k8s/resource.js';
import { allocatedHere, keepOnlyOurs } from './claims.js';

const claim = (results?: { driver: string; pool: string }[]): ResourceClaim => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaim',
  metadata: { namespace: 'ns', name: 'c', uid: 'u1', resourceVersion: '7', annotations: { a: 'b' } },
  spec: { devices: { requests: [{ name: 'req' }] } },
  ...(results === undefined ? {} : { status: { allocation: { devices: { results: results.map((r) => ({ request: 'req', device: 'usb-1', ...r })) } } } }),
});

describe('allocatedHere', () => {
  it.each([
    ['allocated from this pool by this driver', [{ driver: 'virtualization-usb', pool: 'n1' }], true],
    [
      'one of several results is ours',
      [
        { driver: 'gpu', pool: 'n1' },
        { driver: 'virtualization-usb', pool: 'n1' },
      ],
      true,
    ],
    ['another node', [{ driver: 'virtualization-usb', pool: 'n2' }], false],
    ['another driver', [{ driver: 'gpu', pool: 'n1' }], false],
    ['no results', [], false],
    ['not allocated', undefined, false],
  ])('%s', (_, results, expected) => expect(allocatedHere(claim(results), 'virtualization-usb', 'n1')).toBe(expected));
});

describe('keepOnlyOurs', () => {
  const keep = keepOnlyOurs('virtualization-usb', 'n1');

  it('keeps a claim of this node whole', () => {
    const c = claim([{ driver: 'virtualization-usb', pool: 'n1' }]);
    expect(keep(c)).toBe(c);
  });

  it('keeps only the identity and version of any other claim', () => {
    expect(keep(claim([{ driver: 'virtualization-usb', pool: 'n2' }]))).toEqual({
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      metadata: { namespace: 'ns', name: 'c', uid: 'u1', resourceVersion: '7' },
    });
    expect(keep(claim()).status).toBeUndefined();
  });
});
