import { describe, expect, it } from '@jest/globals';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../../../shared/api/resources/virtualmachineclass.js';
import { cpuModelOf, effectiveCoreFraction, requestedCpu, topologyOf } from './cpu.js';

const cls = (cpu: VirtualMachineClass['spec']['cpu'], extra: Partial<VirtualMachineClass> = {}): VirtualMachineClass =>
  ({ metadata: { name: 'c' }, spec: { cpu, sizingPolicies: [{ cores: { min: 1, max: 4 }, defaultCoreFraction: '25%' }] }, ...extra }) as VirtualMachineClass;
const vm = (cores: number, coreFraction?: string, recommended?: string): VirtualMachine =>
  ({
    metadata: {},
    spec: { cpu: { cores, coreFraction } },
    status: recommended ? { recommendedResources: { cpu: { coreFraction: recommended } } } : undefined,
  }) as VirtualMachine;

describe('CPU of the internal VM', () => {
  it.each([
    [1, 1, 1],
    [16, 1, 16],
    [20, 2, 10],
    [17, 1, 17],
    [64, 4, 16],
    [96, 8, 12],
    [100, 5, 20],
  ])('%i cores are %i socket(s) of %i', (cores, sockets, coresPerSocket) => {
    expect(topologyOf(cores)).toEqual({ sockets, coresPerSocket });
  });

  it.each<[string, VirtualMachine, number]>([
    ['the VM fraction wins', vm(2, '50%'), 50],
    ['the class policy default applies when the VM sets none', vm(2), 25],
    ['no policy for the core count means a full core', vm(8), 100],
    ['Auto follows the recommendation', vm(2, 'Auto', '10%'), 10],
    ['Auto without a recommendation is a full core', vm(2, 'Auto'), 100],
  ])('core fraction: %s', (_what, v, percent) => {
    expect(effectiveCoreFraction(v, cls({ type: 'Host' }))).toBe(percent);
  });

  it.each([
    [2, 50, '1'],
    [1, 5, '50m'],
    [3, 100, '3'],
    [3, 25, '750m'],
  ])('%i cores at %i%% request %s CPU', (cores, fraction, cpu) => {
    expect(requestedCpu(cores, fraction)).toBe(cpu);
  });

  it.each<[string, VirtualMachineClass, unknown]>([
    ['Host', cls({ type: 'Host' }), { model: 'host-model' }],
    ['HostPassthrough', cls({ type: 'HostPassthrough' }), { model: 'host-passthrough' }],
    ['Model', cls({ type: 'Model', model: 'Nehalem' }), { model: 'Nehalem' }],
    [
      'Features',
      cls({ type: 'Features', features: ['avx'] }),
      {
        model: 'qemu64',
        features: [
          { name: 'avx', policy: 'require' },
          { name: 'invtsc', policy: 'optional' },
          { name: 'svm', policy: 'optional' },
        ],
      },
    ],
    [
      'Discovery (features from the class status)',
      cls({ type: 'Discovery' }, { status: { phase: 'Ready', cpuFeatures: { enabled: ['sse4_2', 'svm'] } } }),
      {
        model: 'qemu64',
        features: [
          { name: 'sse4_2', policy: 'require' },
          { name: 'svm', policy: 'require' },
          { name: 'invtsc', policy: 'optional' },
        ],
      },
    ],
  ])('class CPU type %s gives the guest model', (_type, c, model) => {
    expect(cpuModelOf(c)).toEqual(model);
  });
});
