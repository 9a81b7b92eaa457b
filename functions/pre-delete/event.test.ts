import { describe, expect, it } from '@jest/globals';
import { ValidationError } from '../../shared/errors/index.js';
import { decide } from './event.js';

const mc = (name: string, enabled?: boolean | null): object => ({
  apiVersion: 'deckhouse.io/v1alpha1',
  kind: 'ModuleConfig',
  metadata: { name },
  spec: enabled === undefined ? { version: 1 } : { enabled, version: 1 },
});
const type = (mode: string, op: string): string => `dev.knative.apiserver.${mode}.${op}`;

describe('which events start the clean-up', () => {
  it.each([
    ['the ModuleConfig is deleted', type('resource', 'delete'), mc('virtualization', true), 'deleted'],
    ['the ModuleConfig is updated to disabled', type('resource', 'update'), mc('virtualization', false), 'disabled'],
    ['a restarted source replays a disabled ModuleConfig', type('resource', 'add'), mc('virtualization', false), 'disabled'],
    ['a reference-mode delete names it', type('ref', 'delete'), { kind: 'ModuleConfig', name: 'virtualization' }, 'deleted'],
  ])('acts when %s', (_what, eventType, data, why) => {
    expect(decide({ type: eventType, data }, 'virtualization')).toEqual({ act: true, why });
  });

  it.each([
    ['the module is enabled', type('resource', 'update'), mc('virtualization', true)],
    ['enabled is left to the default', type('resource', 'update'), mc('virtualization')],
    ['enabled is null', type('resource', 'update'), mc('virtualization', null)],
    ['another module is disabled', type('resource', 'update'), mc('cni-cilium', false)],
    ['another module is deleted', type('resource', 'delete'), mc('cni-cilium')],
    ['the object is not a ModuleConfig', type('resource', 'delete'), { kind: 'Secret', metadata: { name: 'virtualization' } }],
    ['a reference-mode update cannot tell enabled', type('ref', 'update'), { kind: 'ModuleConfig', name: 'virtualization' }],
    ['the type is not an apiserver event', 'dev.example.other', mc('virtualization', false)],
  ])('ignores the event when %s', (_what, eventType, data) => {
    expect(decide({ type: eventType, data }, 'virtualization')).toMatchObject({ act: false });
  });

  it.each([
    ['no data', undefined],
    ['a string', 'virtualization'],
    ['no name', { kind: 'ModuleConfig', metadata: {} }],
    ['an object without any name', { kind: 'ModuleConfig' }],
    ['enabled as a string', { kind: 'ModuleConfig', metadata: { name: 'virtualization' }, spec: { enabled: 'false' } }],
  ])('refuses an apiserver event with %s as a validation error', (_what, data) => {
    expect(() => decide({ type: type('resource', 'update'), data }, 'virtualization')).toThrow(ValidationError);
  });
});
