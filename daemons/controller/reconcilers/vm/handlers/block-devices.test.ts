/**
 * The VM block-devices handler on its own, over in-memory kinds: devices resolved from the caches,
 * BlockDevicesReady, status.blockDeviceRefs (size, attached, boot order) and the protection finalizers
 * put on devices in use and taken off ones the spec dropped.
 */
import { describe, expect, it } from '@jest/globals';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import type { InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { VirtualDisk } from '../../../../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../../../shared/api/resources/virtualimage.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { clusterImage, disk, image, vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import { blockDevicesHandler } from './block-devices.js';

const scope = { namespace: 'ns', id: 'unit' };
type Refs = VirtualMachine['spec']['blockDeviceRefs'];

const vm = (blockDeviceRefs: Refs, status?: VirtualMachine['status']): VirtualMachine => {
  const v = vmOf(scope, 'web', 'generic', { blockDeviceRefs });
  return { ...v, metadata: { ...v.metadata, uid: 'vm-uid' }, ...(status ? { status } : {}) };
};
const vd = (name: string, phase?: string, pvc?: string): VirtualDisk =>
  ({
    ...disk(scope, name),
    ...(phase ? { status: { phase, capacity: '10Gi', ...(pvc ? { target: { persistentVolumeClaimName: pvc } } : {}) } } : {}),
  }) as VirtualDisk;
const vi = (name: string, phase: string, registryURL?: string): VirtualImage =>
  ({ ...image(scope, name), status: { phase, size: { unpacked: '1Gi' }, ...(registryURL ? { target: { registryURL } } : {}) } }) as VirtualImage;
const cvi = (name: string, phase: string): ClusterVirtualImage => {
  const c = clusterImage(scope, name);
  return { ...c, metadata: { ...c.metadata, name }, status: { phase, target: { registryURL: `dvcr/cvi/${name}` } } } as ClusterVirtualImage;
};
const kvvmi = (phase: string, volumes: string[]): InternalVirtualMachineInstance =>
  ({
    metadata: { namespace: 'ns', name: 'web', uid: 'vmi-1' },
    spec: { volumes: volumes.map((name) => ({ name })) },
    status: { phase },
  }) as unknown as InternalVirtualMachineInstance;

interface Row {
  what: string;
  refs: Refs;
  disks?: VirtualDisk[];
  images?: VirtualImage[];
  clusterImages?: ClusterVirtualImage[];
  kvvmi?: InternalVirtualMachineInstance;
  ready: { status: string; reason: string };
  message?: RegExp;
  devices?: string[];
  statusRefs?: object[];
}

describe('the VM block-devices handler', () => {
  it.each<Row>([
    { what: 'is ready with no devices', refs: [], ready: { status: 'True', reason: 'BlockDevicesReady' }, devices: [], statusRefs: [] },
    {
      what: 'waits for a disk that does not exist',
      refs: [{ kind: 'VirtualDisk', name: 'root' }],
      ready: { status: 'False', reason: 'BlockDevicesNotReady' },
      message: /VirtualDisk root not found/,
      statusRefs: [{ kind: 'VirtualDisk', name: 'root', attached: false, bootOrder: 1 }],
    },
    {
      what: 'waits for a disk still provisioning, showing its size',
      refs: [{ kind: 'VirtualDisk', name: 'root' }],
      disks: [vd('root', 'Provisioning')],
      ready: { status: 'False', reason: 'BlockDevicesNotReady' },
      message: /VirtualDisk root is not ready \(phase Provisioning\)/,
      statusRefs: [{ kind: 'VirtualDisk', name: 'root', size: '10Gi', attached: false, bootOrder: 1 }],
    },
    {
      what: 'waits for a Ready disk without a PVC',
      refs: [{ kind: 'VirtualDisk', name: 'root' }],
      disks: [vd('root', 'Ready')],
      ready: { status: 'False', reason: 'BlockDevicesNotReady' },
      message: /is not ready \(phase Ready\)/,
    },
    {
      what: 'uses a disk waiting for its first consumer, and an image in DVCR',
      refs: [
        { kind: 'VirtualDisk', name: 'root', bootOrder: 1 },
        { kind: 'VirtualImage', name: 'iso' },
      ],
      disks: [vd('root', 'WaitForFirstConsumer', 'pvc-root')],
      images: [vi('iso', 'Ready', 'dvcr/vi/iso')],
      ready: { status: 'True', reason: 'BlockDevicesReady' },
      devices: ['VirtualDisk/root', 'VirtualImage/iso'],
      statusRefs: [
        { kind: 'VirtualDisk', name: 'root', size: '10Gi', attached: false, bootOrder: 1 },
        { kind: 'VirtualImage', name: 'iso', size: '1Gi', attached: false },
      ],
    },
    {
      what: 'names every device not ready in one message',
      refs: [
        { kind: 'VirtualImage', name: 'iso' },
        { kind: 'ClusterVirtualImage', name: 'base' },
      ],
      images: [vi('iso', 'Ready')],
      clusterImages: [cvi('base', 'Pending')],
      ready: { status: 'False', reason: 'BlockDevicesNotReady' },
      message: /VirtualImage iso has no storage location yet; ClusterVirtualImage base is not ready \(phase Pending\)/,
    },
    {
      what: 'marks a device attached when the running instance has its volume (boot order by position when none is given)',
      refs: [
        { kind: 'VirtualDisk', name: 'root' },
        { kind: 'ClusterVirtualImage', name: 'base' },
      ],
      disks: [vd('root', 'Ready', 'pvc-root')],
      clusterImages: [cvi('base', 'Ready')],
      kvvmi: kvvmi('Running', ['vd-root']),
      ready: { status: 'True', reason: 'BlockDevicesReady' },
      devices: ['VirtualDisk/root', 'ClusterVirtualImage/base'],
      statusRefs: [
        { kind: 'VirtualDisk', name: 'root', size: '10Gi', attached: true, bootOrder: 1 },
        { kind: 'ClusterVirtualImage', name: 'base', attached: false, bootOrder: 2 },
      ],
    },
    {
      what: 'marks nothing attached while the instance is not running',
      refs: [{ kind: 'VirtualDisk', name: 'root' }],
      disks: [vd('root', 'Ready', 'pvc-root')],
      kvvmi: kvvmi('Scheduling', ['vd-root']),
      ready: { status: 'True', reason: 'BlockDevicesReady' },
      statusRefs: [{ kind: 'VirtualDisk', name: 'root', size: '10Gi', attached: false, bootOrder: 1 }],
    },
  ])('$what', async (row) => {
    const { deps } = inMemoryDeps({
      seed: { disks: row.disks ?? [], images: row.images ?? [], clusterImages: row.clusterImages ?? [], kvvmis: row.kvvmi ? [row.kvvmi] : [] },
    });
    const state = initVMState(vm(row.refs));

    await blockDevicesHandler(deps).handle(state, handlerContext());

    const cond = state.status.conditions?.find((c) => c.type === 'BlockDevicesReady');
    expect(cond).toMatchObject(row.ready);
    if (row.message) {
      expect(cond?.message).toMatch(row.message);
      expect(state.waitingFor.join('\n')).toMatch(row.message);
      expect(state.devices).toBeUndefined();
    } else expect(state.waitingFor).toEqual([]);
    if (row.devices) expect(state.devices?.map((d) => `${d.kind}/${d.name}`)).toEqual(row.devices);
    if (row.statusRefs) expect(state.status.blockDeviceRefs).toEqual(row.statusRefs);
  });

  it('protects every device in use with its finalizer, once, also one not ready yet', async () => {
    const { deps, kinds } = inMemoryDeps({
      seed: { disks: [vd('root', 'Ready', 'pvc-root'), vd('data', 'Provisioning')], clusterImages: [cvi('base', 'Ready')] },
    });
    const refs: Refs = [
      { kind: 'VirtualDisk', name: 'root' },
      { kind: 'VirtualDisk', name: 'data' },
      { kind: 'ClusterVirtualImage', name: 'base' },
    ];
    await blockDevicesHandler(deps).handle(initVMState(vm(refs)), handlerContext());
    await blockDevicesHandler(deps).handle(initVMState(vm(refs)), handlerContext());

    expect(kinds.disks.stored('ns/root')?.metadata.finalizers).toEqual([Finalizer.vdProtection]);
    expect(kinds.disks.stored('ns/data')?.metadata.finalizers).toEqual([Finalizer.vdProtection]);
    expect(kinds.clusterImages.stored('base')?.metadata.finalizers).toEqual([Finalizer.cviProtection]);
    // The second pass saw its own writes in the cache: one write per device.
    expect(kinds.disks.calls).toHaveLength(2);
    expect(kinds.clusterImages.calls).toHaveLength(1);
  });

  it('releases a device the spec dropped unless another VM still uses it', async () => {
    const protectedDisk = (name: string): VirtualDisk => {
      const d = vd(name, 'Ready', `pvc-${name}`);
      return { ...d, metadata: { ...d.metadata, finalizers: [Finalizer.vdProtection] } };
    };
    const other = vmOf(scope, 'other', 'generic', { blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'shared' }] });
    const { deps, kinds } = inMemoryDeps({
      seed: {
        disks: [protectedDisk('root'), protectedDisk('old'), protectedDisk('shared')],
        vms: [{ ...other, metadata: { ...other.metadata, uid: 'other-uid' } }],
      },
    });
    const before = [
      { kind: 'VirtualDisk' as const, name: 'root', attached: false },
      { kind: 'VirtualDisk' as const, name: 'old', attached: false },
      { kind: 'VirtualDisk' as const, name: 'shared', attached: false },
    ];
    const state = initVMState(vm([{ kind: 'VirtualDisk', name: 'root' }], { blockDeviceRefs: before }));

    await blockDevicesHandler(deps).handle(state, handlerContext());

    expect(kinds.disks.stored('ns/old')?.metadata.finalizers ?? []).toEqual([]);
    expect(kinds.disks.stored('ns/shared')?.metadata.finalizers).toEqual([Finalizer.vdProtection]);
    expect(kinds.disks.stored('ns/root')?.metadata.finalizers).toEqual([Finalizer.vdProtection]);
    expect(state.status.blockDeviceRefs?.map((r) => r.name)).toEqual(['root']);
  });
});
