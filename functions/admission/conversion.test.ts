/** The conversion webhook: ConversionReview codec and VirtualMachineClass v1alpha2 <-> v1alpha3. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { answerConversion } from './conversion.js';

const GROUP = 'virtualization.deckhouse.io';

const cls = (version: string, policy: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: `${GROUP}/${version}`,
  kind: 'VirtualMachineClass',
  metadata: { name: 'generic', uid: 'u1', resourceVersion: '7' },
  spec: { cpu: { type: 'Model', model: 'Nehalem' }, sizingPolicies: [{ cores: { min: 1, max: 4 }, ...policy }] },
  status: { phase: 'Ready' },
});

const review = (desiredAPIVersion: string, objects: unknown[]): unknown => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: { uid: 'r1', desiredAPIVersion, objects },
});

const convert = (desired: string, objects: unknown[]): unknown => {
  const a = answerConversion(review(`${GROUP}/${desired}`, objects));
  if (!a.ok) throw new Error(a.message);
  return a.review.response;
};

describe('the conversion webhook', () => {
  it('writes v1alpha2 core fractions as v1alpha3 percent strings, keeping Auto, metadata and status', () => {
    expect(
      convert('v1alpha3', [cls('v1alpha2', { coreFractions: [5, 100], defaultCoreFraction: 5 }), cls('v1alpha2', { defaultCoreFraction: 'Auto' })]),
    ).toEqual({
      uid: 'r1',
      result: { status: 'Success' },
      convertedObjects: [cls('v1alpha3', { coreFractions: ['5%', '100%'], defaultCoreFraction: '5%' }), cls('v1alpha3', { defaultCoreFraction: 'Auto' })],
    });
  });

  it('writes v1alpha3 percent strings as v1alpha2 integers', () => {
    expect(convert('v1alpha2', [cls('v1alpha3', { coreFractions: ['10%', '50%'], defaultCoreFraction: '50%' })])).toMatchObject({
      result: { status: 'Success' },
      convertedObjects: [cls('v1alpha2', { coreFractions: [10, 50], defaultCoreFraction: 50 })],
    });
  });

  it('returns any valid class unchanged after a round trip through the other version', () => {
    const fraction = fc.integer({ min: 1, max: 100 });
    fc.assert(
      fc.property(fc.array(fraction, { maxLength: 5 }), fc.option(fc.oneof(fraction, fc.constant('Auto')), { nil: undefined }), (fractions, d) => {
        const original = cls('v1alpha2', { coreFractions: fractions, ...(d !== undefined ? { defaultCoreFraction: d } : {}) });
        const there = (convert('v1alpha3', [original]) as { convertedObjects: unknown[] }).convertedObjects;
        const back = (convert('v1alpha2', there) as { convertedObjects: unknown[] }).convertedObjects;
        expect(back).toEqual([original]);
      }),
    );
  });

  it('fails, naming the object and the field, for a value the wanted version cannot hold', () => {
    expect(convert('v1alpha2', [cls('v1alpha3', { coreFractions: ['5%', 'half'] })])).toEqual({
      uid: 'r1',
      convertedObjects: [],
      result: { status: 'Failure', message: expect.stringMatching(/generic .*spec\.sizingPolicies\[0\]\.coreFractions\[1\]: must be a percentage/) },
    });
  });

  it('fails for another kind or an unknown version', () => {
    const disk = { apiVersion: `${GROUP}/v1alpha2`, kind: 'VirtualDisk', metadata: { name: 'd' } };
    expect(convert('v1alpha3', [disk])).toMatchObject({ result: { status: 'Failure', message: expect.stringContaining('VirtualDisk d') } });
    expect(convert('v1beta1', [cls('v1alpha2', {})])).toMatchObject({ result: { status: 'Failure', message: expect.stringContaining('v1beta1') } });
  });

  it('refuses a malformed envelope, naming what is wrong', () => {
    expect(answerConversion({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { desiredAPIVersion: 'x', objects: [] } })).toEqual({
      ok: false,
      message: expect.stringContaining('request.uid'),
    });
    expect(answerConversion('not json')).toMatchObject({ ok: false });
  });
});
