import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine } from '../../../../../shared/api/internal/resources.js';
import { withHotpluggedVolumes } from './hotplugged.js';

type Spec = InternalVirtualMachine['spec']['template']['spec'];
const kvvm = (volumes: Spec['volumes'], disks: string[]): InternalVirtualMachine =>
  ({
    metadata: { name: 'vm' },
    spec: { runStrategy: 'Always', template: { spec: { volumes, domain: { devices: { disks: disks.map((name) => ({ name, disk: { bus: 'scsi' } })) } } } } },
  }) as InternalVirtualMachine;

const root = { name: 'vd-root', persistentVolumeClaim: { claimName: 'root-pvc' } };
const hot = { name: 'vd-hot', persistentVolumeClaim: { claimName: 'hot-pvc', hotpluggable: true } };

describe('volumes KubeVirt hot-plugged into the internal VM', () => {
  it('are carried over from the stored template with their disks, after ours', () => {
    const built = kvvm([root], ['vd-root']);
    const out = withHotpluggedVolumes(built, kvvm([root, hot], ['vd-root', 'vd-hot'])).spec.template.spec;
    expect(out.volumes).toEqual([root, hot]);
    expect(out.domain.devices?.disks?.map((d) => d.name)).toEqual(['vd-root', 'vd-hot']);
  });

  it('are left out once removevolume took them from the stored template, and a volume we build is never doubled', () => {
    const built = kvvm([root], ['vd-root']);
    expect(withHotpluggedVolumes(built, kvvm([root], ['vd-root']))).toBe(built);
    expect(withHotpluggedVolumes(built, undefined)).toBe(built);
    const ownHot = kvvm([root, hot], ['vd-root', 'vd-hot']);
    expect(withHotpluggedVolumes(ownHot, kvvm([root, hot], ['vd-root', 'vd-hot']))).toBe(ownHot);
  });

  it('a stored volume that is not hotpluggable is not kept (a disk removed from the spec goes)', () => {
    const built = kvvm([], []);
    expect(withHotpluggedVolumes(built, kvvm([root], ['vd-root']))).toBe(built);
  });
});
