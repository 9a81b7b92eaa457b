import { describe, expect, it } from '@jest/globals';
import { bootOrders, busesOf, diskAndVolume, serialOf, volumeNameOf, type ResolvedDevice } from './devices.js';
import { osShapeOf, provisioningOf } from './domain.js';

describe('block devices of the internal VM', () => {
  it.each([
    ['VirtualDisk', 'data', 'vd-data'],
    ['VirtualImage', 'ubuntu', 'vi-ubuntu'],
    ['ClusterVirtualImage', 'alpine', 'cvi-alpine'],
  ] as const)('names a %s %s as %s', (kind, name, volume) => {
    expect(volumeNameOf(kind, name)).toBe(volume);
  });

  it('shortens long or dotted names with a stable hash and keeps them DNS labels within the limit', () => {
    const long = volumeNameOf('ClusterVirtualImage', 'a'.repeat(80));
    expect(long.length).toBeLessThanOrEqual(48);
    expect(long).toMatch(/^cvi-a+-[0-9a-f]{8}$/);
    expect(volumeNameOf('VirtualImage', 'ubuntu.22.04')).toMatch(/^vi-ubuntu-22-04-[0-9a-f]{8}$/);
    expect(volumeNameOf('VirtualImage', 'ubuntu.22.04')).toBe(volumeNameOf('VirtualImage', 'ubuntu.22.04'));
  });

  it('uses the md5 of the device uid as the serial', () => {
    expect(serialOf('abc')).toBe('900150983cd24fb0d6963f7d28e17f72');
  });

  it.each([
    ['list order when no ref sets one', [{}, {}, {}], [1, 2, 3]],
    ['only the explicit ones when any ref sets one', [{ bootOrder: 2 }, {}, { bootOrder: 1 }], [2, undefined, 1]],
  ])('boot order: %s', (_what, refs, orders) => {
    expect(bootOrders(refs)).toEqual(orders);
  });

  it.each([
    ['Generic', true, { disk: 'scsi', cdrom: 'scsi', nic: 'virtio' }],
    ['Generic', false, { disk: 'sata', cdrom: 'sata', nic: 'e1000' }],
    ['Legacy', true, { disk: 'virtio', cdrom: 'ide', nic: 'virtio' }],
    ['Legacy', false, { disk: 'ide', cdrom: 'ide', nic: 'rtl8139' }],
  ] as const)('buses for %s with paravirtualization %s', (osType, enableParavirtualization, buses) => {
    expect(busesOf({ osType, enableParavirtualization })).toEqual(buses);
  });

  it('maps a disk to a PVC volume, an ISO image to a CD-ROM, a DVCR image to a container disk', () => {
    const buses = busesOf({ osType: 'Generic', enableParavirtualization: true });
    const vd: ResolvedDevice = { kind: 'VirtualDisk', name: 'd', uid: 'u', source: { pvc: 'pvc-d', readOnly: false }, cdrom: false };
    const iso: ResolvedDevice = { kind: 'VirtualImage', name: 'iso', uid: 'v', source: { pvc: 'pvc-i', readOnly: true }, cdrom: true };
    const cvi: ResolvedDevice = { kind: 'ClusterVirtualImage', name: 'c', uid: 'w', source: { image: 'dvcr/cvi/c:1' }, cdrom: false };
    expect(diskAndVolume(vd, buses, 1)).toEqual({
      disk: { name: 'vd-d', serial: serialOf('u'), errorPolicy: 'report', bootOrder: 1, disk: { bus: 'scsi' } },
      volume: { name: 'vd-d', persistentVolumeClaim: { claimName: 'pvc-d' } },
    });
    expect(diskAndVolume(iso, buses, undefined)).toEqual({
      disk: { name: 'vi-iso', serial: serialOf('v'), errorPolicy: 'report', cdrom: { bus: 'scsi' } },
      volume: { name: 'vi-iso', persistentVolumeClaim: { claimName: 'pvc-i', readOnly: true } },
    });
    expect(diskAndVolume(cvi, buses, 2).volume).toEqual({ name: 'cvi-c', containerDisk: { image: 'dvcr/cvi/c:1' } });
  });
});

describe('machine and provisioning of the internal VM', () => {
  it.each([
    ['Generic', 'BIOS', 'q35', undefined, { enabled: true }],
    ['Windows', 'EFI', 'q35', { bootloader: { efi: { secureBoot: false } } }, { enabled: true }],
    ['Legacy', 'BIOS', 'pc', undefined, { enabled: false }],
    ['Generic', 'EFIWithSecureBoot', 'q35', { bootloader: { efi: { secureBoot: true, persistent: true } } }, { enabled: true }],
  ] as const)('%s with %s boots machine %s', (osType, bootloader, machine, firmware, smm) => {
    const shape = osShapeOf({ osType, bootloader });
    expect(shape.machine.type).toBe(machine);
    expect(shape.firmware).toEqual(firmware);
    expect(shape.features['smm']).toEqual(smm);
  });

  it('adds a TPM and Hyper-V features for Windows, an RNG for Generic', () => {
    expect(osShapeOf({ osType: 'Windows', bootloader: 'BIOS' }).devices).toMatchObject({ tpm: {} });
    expect(osShapeOf({ osType: 'Windows', bootloader: 'BIOS' }).features).toHaveProperty('hyperv');
    expect(osShapeOf({ osType: 'Generic', bootloader: 'BIOS' }).devices).toMatchObject({ rng: {} });
  });

  it.each([
    [
      { type: 'UserData', userData: '#cloud-config' },
      { name: 'cloudinit', cloudInitNoCloud: { userData: '#cloud-config' } },
    ],
    [
      { type: 'UserDataRef', userDataRef: { kind: 'Secret', name: 'ci' } },
      { name: 'cloudinit', cloudInitNoCloud: { secretRef: { name: 'ci' } } },
    ],
    [
      { type: 'SysprepRef', sysprepRef: { kind: 'Secret', name: 'sp' } },
      { name: 'sysprep', sysprep: { secret: { name: 'sp' } } },
    ],
  ] as const)('provisioning %j becomes volume %j', (provisioning, volume) => {
    expect(provisioningOf(provisioning, 'scsi', 'scsi')?.volume).toEqual(volume);
  });
});
