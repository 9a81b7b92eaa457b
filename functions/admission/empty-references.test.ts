/**
 * Every validator whose checks look related objects up: an empty reference is denied by the schema,
 * naming each empty field at once, and no lookup runs (an empty name must never reach the apiserver,
 * where it would address the whole collection).
 */
import { describe, expect, it } from '@jest/globals';
import { validate } from './admit.js';
import { virtualDiskValidator } from './rules/virtualdisk.js';
import { clusterVirtualImageValidator, virtualImageValidator } from './rules/virtualimage.js';
import { virtualMachineValidator } from './rules/virtualmachine/index.js';
import { vmbdaValidator } from './rules/vmbda.js';
import { vmopValidator } from './rules/vmop.js';
import { vmPoolValidator } from './rules/vmpool.js';
import type { Validator } from './rules/validator.js';
import { FakeLookups, context, emptyWorld } from './testing/fake-lookups.js';
import { NS, clusterImage, disk, image, pool, request, typed, vm, vmbda, vmop } from './testing/objects.js';

interface Case {
  readonly name: string;
  readonly validator: Validator<never>;
  readonly object: unknown;
  readonly paths: readonly string[];
}

const validator = <T>(v: Validator<T>): Validator<never> => v as unknown as Validator<never>;

const CASES: readonly Case[] = [
  {
    name: 'a VM with an empty class, disk, image, IP address, MAC address and USB device name',
    validator: validator(virtualMachineValidator),
    object: vm((o) => {
      o.spec.virtualMachineClassName = '';
      o.spec.virtualMachineIPAddressName = '';
      o.spec.blockDeviceRefs = [
        { kind: 'VirtualDisk', name: '' },
        { kind: 'ClusterVirtualImage', name: '' },
      ];
      o.spec.networks = [{ type: 'Main', virtualMachineMACAddressName: '' }];
      o.spec.usbDevices = [{ name: '' }];
    }),
    paths: [
      'spec.blockDeviceRefs[0].name',
      'spec.blockDeviceRefs[1].name',
      'spec.networks[0].virtualMachineMACAddressName',
      'spec.usbDevices[0].name',
      'spec.virtualMachineClassName',
      'spec.virtualMachineIPAddressName',
    ],
  },
  {
    name: 'an attachment with an empty VM and block device name',
    validator: validator(vmbdaValidator),
    object: vmbda((o) => void ((o.spec.virtualMachineName = ''), (o.spec.blockDeviceRef.name = ''))),
    paths: ['spec.blockDeviceRef.name', 'spec.virtualMachineName'],
  },
  {
    name: 'an operation with an empty VM name',
    validator: validator(vmopValidator),
    object: vmop((o) => void (o.spec.virtualMachineName = '')),
    paths: ['spec.virtualMachineName'],
  },
  {
    name: 'a disk from an image with an empty name',
    validator: validator(virtualDiskValidator),
    object: disk((o) => void (o.spec.dataSource = { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: '' } })),
    paths: ['spec.dataSource.objectRef.name'],
  },
  {
    name: 'an image from a disk with an empty name',
    validator: validator(virtualImageValidator),
    object: image((o) => void (o.spec.dataSource = { type: 'ObjectRef', objectRef: { kind: 'VirtualDisk', name: '' } })),
    paths: ['spec.dataSource.objectRef.name'],
  },
  {
    name: 'a cluster image from a disk with an empty name and namespace',
    validator: validator(clusterVirtualImageValidator),
    object: clusterImage((o) => void (o.spec.dataSource = { type: 'ObjectRef', objectRef: { kind: 'VirtualDisk', name: '', namespace: '' } })),
    paths: ['spec.dataSource.objectRef.name', 'spec.dataSource.objectRef.namespace'],
  },
  {
    name: 'a pool whose template names an empty class and image',
    validator: validator(vmPoolValidator),
    object: pool((o) => {
      const spec = o.spec.virtualMachineTemplate.spec;
      if (spec === undefined) throw new Error('the pool fixture lost its template spec');
      spec.virtualMachineClassName = '';
      spec.blockDeviceRefs = [
        { kind: 'VirtualDisk', name: 'root' },
        { kind: 'VirtualImage', name: '' },
      ];
    }),
    paths: ['spec.virtualMachineTemplate.spec.blockDeviceRefs[1].name', 'spec.virtualMachineTemplate.spec.virtualMachineClassName'],
  },
];

describe('empty references', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s: denied naming every empty field, and nothing is looked up', async (_name, c) => {
    const world = emptyWorld();
    world.classes.push(typed.vmClass());
    const lookups = new FakeLookups(world);
    const { decision } = await validate(c.validator, request(c.object), context(lookups));
    expect(decision.allowed).toBe(false);
    expect(decision.violations.map((v) => v.path).sort()).toEqual([...c.paths].sort());
    // The denial is about the field, not about a failed read or an internal mismatch.
    for (const v of decision.violations) expect(v.message).not.toMatch(/internal|could not read|cannot check/i);
    expect([...lookups.calls.keys()]).toEqual([]);
  });

  it('an update to an empty reference is denied the same way, with the old object left alone', async () => {
    const lookups = new FakeLookups(emptyWorld());
    const old = vmbda();
    const { decision } = await validate(
      vmbdaValidator,
      request(
        vmbda((o) => void (o.spec.virtualMachineName = '')),
        { oldObject: old },
      ),
      context(lookups),
    );
    expect(decision.violations.map((v) => v.path)).toEqual(['spec.virtualMachineName']);
    expect([...lookups.calls.keys()]).toEqual([]);
  });

  it('an empty name read from a status (a volume not yet named) is not looked up either', async () => {
    const world = emptyWorld();
    world.vms.push(typed.vm());
    world.disks.push(typed.disk((d) => void (d.status = { phase: 'Provisioning', target: { persistentVolumeClaimName: '' } })));
    world.images.push(
      typed.image((i) => void ((i.metadata.namespace = NS), (i.spec.storage = 'PersistentVolumeClaim'), (i.status = { phase: 'Ready', storageClassName: '' }))),
    );
    const lookups = new FakeLookups(world);
    const migrate = vmop((o) => void (o.spec = { type: 'Migrate', virtualMachineName: 'vm1' }));
    expect((await validate(vmopValidator, request(migrate), context(lookups, { edition: 'CE' }))).decision.allowed).toBe(true);
    const fromImage = disk((o) => void (o.spec.dataSource = { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'ubuntu' } }));
    expect((await validate(virtualDiskValidator, request(fromImage), context(lookups))).decision.allowed).toBe(true);
    expect(lookups.calls.get('persistentVolumeClaim')).toBeUndefined();
    expect(lookups.calls.get('virtualDisk')).toBe(1);
    expect(lookups.calls.get('virtualImage')).toBeGreaterThanOrEqual(1);
    expect(lookups.calls.get('storageClass')).toBeUndefined();
  });
});
