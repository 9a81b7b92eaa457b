import { describe, expect, it } from '@jest/globals';
import type { VirtualMachineIPAddress } from '../../../../../shared/api/resources/addresses.js';
import { API_VERSION } from '../../../../../shared/api/resources/common.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { UnavailableError } from '../../../../../shared/errors/index.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import { ADDRESS_BINDING_GRACE_MS, VM_UID_LABEL, autoAddressName, awaitingFirstStatus, ipamHandler } from './ipam.js';

const scope = { namespace: 'ns', id: 'unit' };
const CIDRS = ['10.66.0.0/16'];

function vm(spec: Partial<VirtualMachine['spec']> = {}): VirtualMachine {
  const v = vmOf(scope, 'web', 'generic', spec);
  return { ...v, metadata: { ...v.metadata, uid: 'vm-uid', generation: 1 } };
}

function address(name: string, status: VirtualMachineIPAddress['status'], labels: Record<string, string> = {}): VirtualMachineIPAddress {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineIPAddress',
    metadata: { name, namespace: 'ns', labels },
    spec: { type: 'Auto' },
    ...(status ? { status } : {}),
  };
}

const AUTO = autoAddressName(vm());
const bound = (name: string, extra: Partial<NonNullable<VirtualMachineIPAddress['status']>> = {}): VirtualMachineIPAddress =>
  address(name, { phase: 'Bound', address: '10.66.0.7', ...extra }, { [VM_UID_LABEL]: 'vm-uid' });

interface Row {
  what: string;
  vm: VirtualMachine;
  cidrs?: string[];
  addresses?: VirtualMachineIPAddress[];
  condition?: { status: string; reason: string } | 'none';
  ipAddress?: string;
  waiting?: RegExp;
  creates?: boolean;
}

describe('the VM ipam handler', () => {
  it.each<Row>([
    { what: 'does nothing and drops the condition when IPAM is off (no subnets)', vm: vm(), cidrs: [], condition: 'none' },
    { what: 'does nothing for a VM only on additional networks', vm: vm({ networks: [{ type: 'Network', name: 'lan' }] }), condition: 'none' },
    {
      what: 'creates the automatic address and waits for it',
      vm: vm(),
      creates: true,
      condition: { status: 'False', reason: 'VirtualMachineIPAddressNotReady' },
      waiting: /to be bound/,
    },
    {
      what: 'uses a bound automatic address',
      vm: vm(),
      addresses: [bound(AUTO)],
      condition: { status: 'True', reason: 'VirtualMachineIPAddressReady' },
      ipAddress: '10.66.0.7',
    },
    {
      what: 'accepts an Attached address',
      vm: vm(),
      addresses: [bound(AUTO, { phase: 'Attached' })],
      condition: { status: 'True', reason: 'VirtualMachineIPAddressReady' },
      ipAddress: '10.66.0.7',
    },
    {
      what: 'waits for a named address that does not exist, and never creates it',
      vm: vm({ virtualMachineIPAddressName: 'fixed' }),
      condition: { status: 'False', reason: 'VirtualMachineIPAddressNotAvailable' },
      waiting: /VirtualMachineIPAddress fixed not found/,
    },
    {
      what: 'refuses an address another VM holds',
      vm: vm({ virtualMachineIPAddressName: 'fixed' }),
      addresses: [address('fixed', { phase: 'Attached', address: '10.66.0.9', virtualMachineName: 'other' })],
      condition: { status: 'False', reason: 'VirtualMachineIPAddressNotAvailable' },
      waiting: /is used by VirtualMachine other/,
    },
    {
      what: 'waits for a named address still Pending',
      vm: vm({ virtualMachineIPAddressName: 'fixed' }),
      addresses: [address('fixed', { phase: 'Pending' })],
      condition: { status: 'False', reason: 'VirtualMachineIPAddressNotReady' },
    },
  ])('$what', async (row) => {
    const { deps, kinds } = inMemoryDeps({ cidrs: row.cidrs ?? CIDRS, seed: { vmips: row.addresses ?? [] } });
    const state = initVMState(row.vm);
    state.status.ipAddress = '10.0.0.1'; // a stale one from an earlier pass

    await ipamHandler(deps).handle(state, handlerContext());

    const cond = state.status.conditions?.find((c) => c.type === 'VirtualMachineIPAddressReady');
    if (row.condition === 'none') expect(cond).toBeUndefined();
    else expect(cond).toMatchObject(row.condition ?? {});
    if (row.ipAddress !== undefined) {
      expect(state.status.ipAddress).toBe(row.ipAddress);
      expect(state.ipAddress).toBe(row.ipAddress);
    } else if (row.condition !== 'none') expect(state.status.ipAddress).toBeUndefined();
    if (row.waiting) expect(state.waitingFor.join('\n')).toMatch(row.waiting);
    expect(kinds.vmips.callsOf('create')).toHaveLength(row.creates === true ? 1 : 0);
  });

  it('makes the automatic address owned by the VM, labelled with its uid, protected by a finalizer, and defers the status write', async () => {
    const { deps, kinds } = inMemoryDeps({ cidrs: CIDRS });
    const state = initVMState(vm());
    await ipamHandler(deps).handle(state, handlerContext());

    const made = kinds.vmips.stored(`ns/${AUTO}`);
    expect(made?.metadata.labels?.[VM_UID_LABEL]).toBe('vm-uid');
    expect(made?.metadata.finalizers).toEqual(['virtualization.deckhouse.io/vmip-cleanup']);
    expect(made?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'VirtualMachine', name: 'web', uid: 'vm-uid', controller: true })]);
    expect(state.status.virtualMachineIPAddressName).toBe(AUTO);
    expect(state.deferStatus).toBe(true);
    // The cache knows its own write at once: the next pass does not create a second one.
    await ipamHandler(deps).handle(initVMState(vm()), handlerContext());
    expect(kinds.vmips.callsOf('create')).toHaveLength(1);
  });

  describe('an address the address reconciler has not answered yet', () => {
    const NOW = new Date('2026-01-01T00:00:30Z');
    const fresh = (change: (m: VirtualMachineIPAddress['metadata']) => void = () => undefined): VirtualMachineIPAddress => {
      const a = address(AUTO, undefined, { [VM_UID_LABEL]: 'vm-uid' });
      a.metadata.creationTimestamp = '2026-01-01T00:00:28Z';
      change(a.metadata);
      return a;
    };

    it.each<[string, VirtualMachineIPAddress, boolean]>([
      ['made moments ago, no status yet: its first status comes as an event', fresh(), true],
      ['older than the grace and still no status: the waiting status is written', fresh((m) => void (m.creationTimestamp = '2025-12-31T23:59:59Z')), false],
      ['with a status already (Pending): the VM says why it waits', { ...fresh(), status: { phase: 'Pending' } }, false],
      ['being deleted', fresh((m) => void (m.deletionTimestamp = '2026-01-01T00:00:29Z')), false],
      ['without a creation time', fresh((m) => void delete m.creationTimestamp), false],
      ['created in the future by this clock (skew)', fresh((m) => void (m.creationTimestamp = '2026-01-01T00:01:00Z')), false],
      ['with a malformed creation time', fresh((m) => void (m.creationTimestamp = 'yesterday')), false],
    ])('%s', async (_what, vmip, defers) => {
      expect(awaitingFirstStatus(vmip, NOW, ADDRESS_BINDING_GRACE_MS)).toBe(defers);
      const { deps } = inMemoryDeps({ cidrs: CIDRS, seed: { vmips: [vmip] } });
      const state = initVMState(vm());
      await ipamHandler(deps).handle(state, handlerContext(NOW));
      expect(state.deferStatus === true).toBe(defers);
      // Either way the VM waits for the binding (and is looked at again, see lifecycle).
      expect(state.waitingFor.join('\n')).toMatch(/to be bound/);
    });
  });

  it('fails the pass (for a retry) when the apiserver refuses the create, with nothing half-made', async () => {
    const { deps, kinds } = inMemoryDeps({ cidrs: CIDRS });
    kinds.vmips.failNext = new UnavailableError('apiserver down');
    await expect(ipamHandler(deps).handle(initVMState(vm()), handlerContext())).rejects.toBeInstanceOf(UnavailableError);
    expect(kinds.vmips.stored(`ns/${AUTO}`)).toBeUndefined();
  });
});
