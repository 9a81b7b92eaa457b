import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { hotplugMoves } from './hotplug.js';

const vmi = (volumes: string[], volumeStatus: Record<string, unknown>[]): InternalVirtualMachineInstance =>
  ({
    metadata: { name: 'vm', namespace: 'ns' },
    spec: {
      volumes: volumes.map((name) => ({ name, persistentVolumeClaim: { claimName: `${name}-pvc`, hotpluggable: name !== 'root' } })),
      domain: { devices: { disks: volumes.map((name) => ({ name, disk: { bus: name === 'root' ? 'virtio' : 'scsi' } })) } },
    },
    status: { phase: 'Running', volumeStatus },
  }) as unknown as InternalVirtualMachineInstance;

const root = { name: 'root', target: 'vda' };
const hot = (phase: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'hot',
  target: '',
  phase,
  hotplugVolume: { attachPodName: 'hp-volume-abcde', attachPodUID: 'uid-1' },
  ...extra,
});

describe("virt-handler's moves on hot-plugged volumes", () => {
  it('mounts a volume whose attachment pod is ready, then attaches it on the next free SCSI target', () => {
    const mounted = hotplugMoves(vmi(['root', 'hot'], [root, hot('AttachedToNode')]));
    expect(mounted?.[1]).toMatchObject({ phase: 'MountedToPod', reason: 'VolumeMountedToPod', target: '' });
    const ready = hotplugMoves(vmi(['root', 'hot'], [root, { ...root, name: 'other', target: 'sda' }, hot('MountedToPod')]));
    expect(ready?.[2]).toMatchObject({ phase: 'Ready', reason: 'VolumeReady', target: 'sdb', message: 'Successfully attach hotplugged volume hot to VM' });
    expect(ready?.[0]).toBe(root);
  });

  it('waits while the attachment pod is not ready, and leaves a Ready volume alone', () => {
    expect(hotplugMoves(vmi(['root', 'hot'], [root, hot('AttachedToNode', { hotplugVolume: { attachPodName: 'hp' } })]))).toBeUndefined();
    expect(hotplugMoves(vmi(['root', 'hot'], [root, hot('Ready', { target: 'sda' })]))).toBeUndefined();
    expect(hotplugMoves(vmi(['root'], [root]))).toBeUndefined();
  });

  it('detaches and unmounts a volume gone from the spec, once', () => {
    const out = hotplugMoves(vmi(['root'], [root, hot('Ready', { target: 'sda' })]));
    expect(out?.[1]).toMatchObject({ phase: 'UnMountedFromPod', reason: 'VolumeUnMountedFromPod', target: '' });
    expect(hotplugMoves(vmi(['root'], [root, hot('UnMountedFromPod')]))).toBeUndefined();
  });
});
