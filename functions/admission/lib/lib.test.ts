/** Value helpers of the rules: label syntax, class conversion. */
import { describe, expect, it } from '@jest/globals';
import { fromV1alpha3 } from '../rules/vmclass-convert.js';
import { labelKeyProblem, labelValueProblem } from './names.js';

describe('label syntax', () => {
  it.each(['app', 'example.com/app', 'a_b.c-d'])('accepts the key %p', (key) => expect(labelKeyProblem(key)).toBeUndefined());
  it.each(['', '-app', 'a/b/c', 'Example.com/app', 'x'.repeat(64)])('refuses the key %p', (key) => expect(labelKeyProblem(key)).toBeDefined());
  it('accepts empty values and refuses spaces', () => {
    expect(labelValueProblem('')).toBeUndefined();
    expect(labelValueProblem('a b')).toBeDefined();
  });
});

describe('VirtualMachineClass v1alpha3 to v1alpha2', () => {
  it('turns percent strings into integers and keeps Auto', () => {
    const converted = fromV1alpha3({
      apiVersion: 'virtualization.deckhouse.io/v1alpha3',
      spec: { sizingPolicies: [{ coreFractions: ['5%', '100%'], defaultCoreFraction: '5%' }, { defaultCoreFraction: 'Auto' }] },
    });
    expect(converted).toEqual({
      ok: true,
      value: {
        apiVersion: 'virtualization.deckhouse.io/v1alpha2',
        spec: { sizingPolicies: [{ coreFractions: [5, 100], defaultCoreFraction: 5 }, { defaultCoreFraction: 'Auto' }] },
      },
    });
  });

  it('names every fraction that is not a percentage', () => {
    const converted = fromV1alpha3({ spec: { sizingPolicies: [{ coreFractions: [5, '0%'], defaultCoreFraction: 50 }] } });
    expect(converted).toEqual({
      ok: false,
      problems: [
        { path: 'spec.sizingPolicies[0].coreFractions[0]', message: 'must be a percentage from 1% to 100%' },
        { path: 'spec.sizingPolicies[0].coreFractions[1]', message: 'must be a percentage from 1% to 100%' },
        { path: 'spec.sizingPolicies[0].defaultCoreFraction', message: 'must be a percentage from 1% to 100%' },
      ],
    });
  });
});
