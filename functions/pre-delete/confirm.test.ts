import { describe, expect, it } from '@jest/globals';
import { NotFoundError, UnavailableError } from '../../shared/errors/index.js';
import { confirmRemoval, moduleConfigReader, type ModuleConfigObject } from './confirm.js';

const mc = (spec: ModuleConfigObject['spec'], deletionTimestamp?: string): ModuleConfigObject => ({
  metadata: { name: 'virtualization', resourceVersion: '3', ...(deletionTimestamp ? { deletionTimestamp } : {}) },
  spec,
});
const reader = (answer: ModuleConfigObject | Error): ReturnType<typeof moduleConfigReader> =>
  moduleConfigReader({ get: () => (answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer)) });

describe('what the apiserver says before pre-delete acts', () => {
  it.each([
    ['gone (404)', new NotFoundError('moduleconfigs virtualization not found'), { confirmed: true, state: 'absent' }],
    ['being deleted', mc({ enabled: true }, '2026-01-01T00:00:00Z'), { confirmed: true, state: 'deleting' }],
    ['disabled', mc({ enabled: false }), { confirmed: true, state: 'disabled' }],
  ] as const)('confirms a ModuleConfig %s', async (_what, answer, expected) => {
    await expect(confirmRemoval(reader(answer), 'virtualization')).resolves.toEqual(expected);
  });

  it.each([
    ['enabled', mc({ enabled: true }), 'spec.enabled: true'],
    ['without spec.enabled', mc({}), 'no spec.enabled: false'],
    ['without spec', mc(null), 'no spec.enabled: false'],
  ] as const)('contradicts for a ModuleConfig %s, naming what it found', async (_what, answer, said) => {
    const result = await confirmRemoval(reader(answer), 'virtualization');
    expect(result).toMatchObject({ confirmed: false, reason: `the apiserver has ModuleConfig virtualization with ${said} (resourceVersion 3)` });
  });

  it('throws when the apiserver cannot answer: never a confirmation made up', async () => {
    await expect(confirmRemoval(reader(new UnavailableError('connection refused')), 'virtualization')).rejects.toThrow('connection refused');
  });
});
