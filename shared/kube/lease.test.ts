import { describe, expect, it } from '@jest/globals';
import { acquiredSpec, heldByOther, recordFingerprint, releasedSpec } from './lease.js';
import { formatMicroTime } from './microtime.js';

const T0 = Date.UTC(2026, 11, 2, 14, 9, 2) * 1000 + 123456;
const T1 = T0 + 2_000_000;

describe('lease records', () => {
  it('creates a record for the first holder with zero transitions', () => {
    expect(acquiredSpec(undefined, 'a', T0, 15)).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2026-12-02T14:09:02.123456Z',
      renewTime: '2026-12-02T14:09:02.123456Z',
      leaseTransitions: 0,
    });
  });

  it('renews by moving renewTime only', () => {
    const held = acquiredSpec(undefined, 'a', T0, 15);
    const renewed = acquiredSpec(held, 'a', T1, 15);
    expect(renewed).toEqual({ ...held, renewTime: formatMicroTime(T1) });
  });

  it('takes over from another holder with a new acquireTime and one more transition', () => {
    const held = { ...acquiredSpec(undefined, 'a', T0, 15), leaseTransitions: 3 };
    expect(acquiredSpec(held, 'b', T1, 15)).toMatchObject({
      holderIdentity: 'b',
      acquireTime: formatMicroTime(T1),
      renewTime: formatMicroTime(T1),
      leaseTransitions: 4,
    });
  });

  it('releases with an empty holder and a one-second duration, keeping transitions', () => {
    const held = { ...acquiredSpec(undefined, 'a', T0, 15), leaseTransitions: 2 };
    expect(releasedSpec(held, T1)).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: formatMicroTime(T1),
      renewTime: formatMicroTime(T1),
      leaseTransitions: 2,
    });
  });

  it('judges another holder valid until its duration has passed since the record was observed', () => {
    const spec = acquiredSpec(undefined, 'a', T0, 15);
    expect(heldByOther(spec, 'b', 1_000, 15_999)).toBe(true);
    expect(heldByOther(spec, 'b', 1_000, 16_000)).toBe(false);
  });

  it('never sees itself, an empty holder or no record as held by another', () => {
    const spec = acquiredSpec(undefined, 'a', T0, 15);
    expect(heldByOther(spec, 'a', 1_000, 1_001)).toBe(false);
    expect(heldByOther(releasedSpec(spec, T1), 'b', 1_000, 1_001)).toBe(false);
    expect(heldByOther(undefined, 'b', 1_000, 1_001)).toBe(false);
  });

  it('fingerprints a record so that a renewal counts as a change and a re-read does not', () => {
    const spec = acquiredSpec(undefined, 'a', T0, 15);
    expect(recordFingerprint({ ...spec })).toBe(recordFingerprint(spec));
    expect(recordFingerprint(acquiredSpec(spec, 'a', T1, 15))).not.toBe(recordFingerprint(spec));
  });
});
