/** The VM's kubevirtConfig handler: KubeVirtReady=False while KubeVirt's configuration lacks a part, gone once it is whole. */
import { describe, expect, it } from '@jest/globals';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import { kubeVirtConfigHandler } from './kubevirt-config.js';

const where = 'InternalVirtualizationKubeVirt d8-virtualization/config';
function pass(missing: string[], conditions?: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[]) {
  const { deps } = inMemoryDeps({ kubevirt: { where, missing: () => missing } });
  const v = vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic');
  const state = initVMState({ ...v, status: conditions ? { conditions } : {} } as typeof v);
  void kubeVirtConfigHandler(deps).handle(state, handlerContext());
  return state.status.conditions?.find((c) => c.type === 'KubeVirtReady');
}
const stated = (reason: string) => [{ type: 'KubeVirtReady', status: 'False', reason, message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' }];

describe('the VM kubevirtConfig handler', () => {
  it('says which parts KubeVirt’s configuration lacks and that the VM will not run', () => {
    expect(pass(['network binding bpfbridge (tap attachment, with migration)'])).toMatchObject({
      status: 'False',
      reason: 'KubeVirtConfigurationIncomplete',
      message: `KubeVirt's configuration (${where}) lacks network binding bpfbridge (tap attachment, with migration): KubeVirt will not run this VM until it is restored`,
    });
  });

  it('says what a missing evacuation flag does instead: the VM runs, KubeVirt’s own evacuation would migrate it', () => {
    expect(pass(["virt-controller flag evacuation-controller-threads: '0' (KubeVirt's own evacuation off)"])?.message).toBe(
      `KubeVirt's configuration (${where}) lacks virt-controller flag evacuation-controller-threads: '0' (KubeVirt's own evacuation off): KubeVirt's own evacuation would migrate this VM beside the module's until it is restored`,
    );
  });

  it('drops its condition once the configuration is whole', () => {
    expect(pass([], stated('KubeVirtConfigurationIncomplete'))).toBeUndefined();
  });

  it('leaves a refusal stated by syncKvvm alone', () => {
    expect(pass([], stated('InternalVirtualMachineRefused'))?.reason).toBe('InternalVirtualMachineRefused');
  });

  it('says nothing when nothing is missing', () => {
    expect(pass([])).toBeUndefined();
  });
});
