import { describe, expect, it } from '@jest/globals';
import type { VirtualMachineMACAddress } from '../../../../../shared/api/resources/addresses.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import { macHandler, type MacPort } from './mac.js';
import { ownedMacName } from './mac-owned.js';

const scope = { namespace: 'ns', id: 'unit' };

function vm(phase?: 'Pending' | 'Stopped' | 'Running'): VirtualMachine {
  const v = vmOf(scope, 'web', 'generic', { networks: [{ type: 'Main' }, { type: 'Network', name: 'a' }, { type: 'ClusterNetwork', name: 'b' }] });
  return { ...v, metadata: { ...v.metadata, uid: 'vm-uid', generation: 1 }, ...(phase ? { status: { phase } } : {}) };
}

/** A MacPort over a map: what the handler created and deleted, as the MAC reconcilers' cache would show it. */
function memoryPort(): MacPort & { made: Map<string, VirtualMachineMACAddress> } {
  const made = new Map<string, VirtualMachineMACAddress>();
  return {
    made,
    get: (_ns, name) => made.get(name),
    ownedBy: () => [...made.values()],
    create: (m) => {
      if (made.has(m.metadata.name ?? '')) return Promise.resolve(false);
      made.set(m.metadata.name ?? '', m);
      return Promise.resolve(true);
    },
    delete: (_ns, name) => {
      made.delete(name);
      return Promise.resolve();
    },
  };
}

const macReady = (s: ReturnType<typeof initVMState>) => s.status.conditions?.find((c) => c.type === 'VirtualMachineMACAddressReady');

describe('macAddresses for networks that name none', () => {
  it('makes one address per such network for a Pending VM and waits saying how many exist', async () => {
    const port = memoryPort();
    const s = initVMState(vm('Pending'));
    await macHandler(inMemoryDeps().deps, port).handle(s, handlerContext());
    expect([...port.made.keys()]).toEqual([ownedMacName(s.obj, 0), ownedMacName(s.obj, 1)]);
    expect(macReady(s)).toMatchObject({
      status: 'False',
      reason: 'VirtualMachineMACAddressNotReady',
      message: 'Waiting for the MAC address to be created 0/2',
    });
    expect(s.waitingFor).toEqual(['Waiting for the MAC address to be created 0/2']);
  });

  it('waits for binding, then hands the addresses to the interfaces and status.networks', async () => {
    const port = memoryPort();
    const deps = inMemoryDeps().deps;
    await macHandler(deps, port).handle(initVMState(vm('Stopped')), handlerContext());
    const unbound = initVMState(vm('Stopped'));
    await macHandler(deps, port).handle(unbound, handlerContext());
    expect(macReady(unbound)?.message).toBe(
      `VirtualMachineMACAddress ${ownedMacName(unbound.obj, 0)}: waiting for MAC address binding; VirtualMachineMACAddress ${ownedMacName(unbound.obj, 1)}: waiting for MAC address binding`,
    );
    let n = 0;
    for (const m of port.made.values()) m.status = { address: `02:00:00:00:00:0${++n}`, virtualMachineName: 'web' };
    const ready = initVMState(vm('Stopped'));
    await macHandler(deps, port).handle(ready, handlerContext());
    expect(macReady(ready)).toMatchObject({ status: 'True', reason: 'VirtualMachineMACAddressReady' });
    expect([...(ready.macs ?? [])]).toHaveLength(2);
    expect([...(ready.macNames?.keys() ?? [])]).toEqual([1, 2]);
  });

  it('makes none for a running VM, as the original (the new network waits for a stop)', async () => {
    const port = memoryPort();
    const s = initVMState(vm('Running'));
    await macHandler(inMemoryDeps().deps, port).handle(s, handlerContext());
    expect(port.made.size).toBe(0);
    expect(s.waitingFor).toEqual([]);
  });
});
