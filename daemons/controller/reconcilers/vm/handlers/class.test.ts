import { describe, expect, it } from '@jest/globals';
import { DEFAULT_CLASS_ANNOTATION, type VirtualMachineClass } from '../../../../../shared/api/resources/virtualmachineclass.js';
import { defaultClassName } from './class.js';

const cls = (name: string, isDefault?: string): VirtualMachineClass =>
  ({
    metadata: { name, ...(isDefault !== undefined ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: isDefault } } : {}) },
    spec: { cpu: { type: 'Host' } },
  }) as VirtualMachineClass;

describe('the default class', () => {
  it.each<[string, VirtualMachineClass[], string | undefined]>([
    ['the one annotated is-default-class=true', [cls('a'), cls('generic', 'true')], 'generic'],
    ['none when no class is annotated', [cls('a'), cls('b', 'false')], undefined],
    ['none when two classes claim it', [cls('a', 'true'), cls('b', 'true')], undefined],
  ])('is %s', (_what, classes, expected) => {
    expect(defaultClassName(classes)).toBe(expected);
  });
});
