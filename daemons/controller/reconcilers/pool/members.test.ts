import { describe, expect, it } from '@jest/globals';
import { templateHash } from '../../../../shared/api/pool-members.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { POOL_LABELS, type VirtualMachinePool } from '../../../../shared/api/resources/vmpool.js';
import { isDiskOfTemplate, pickVictims, poolStatus, randomSuffix, resolveRefs, retainDiskName } from './members.js';

const pool = (spec: Partial<VirtualMachinePool['spec']> = {}): VirtualMachinePool =>
  ({
    apiVersion: 'virtualization.deckhouse.io/v1alpha2',
    kind: 'VirtualMachinePool',
    metadata: { name: 'web', namespace: 'ns', uid: 'u-pool', generation: 2 },
    spec: {
      replicas: 2,
      scaleDownPolicy: 'NewestFirst',
      virtualDiskTemplates: [
        { name: 'root', spec: {} },
        { name: 'data', reclaim: { onScaleDown: 'Retain', keep: 0 }, spec: {} },
      ],
      virtualMachineTemplate: {
        spec: {
          blockDeviceRefs: [
            { kind: 'VirtualDisk', name: 'root' },
            { kind: 'VirtualImage', name: 'shared' },
            { kind: 'VirtualDisk', name: 'data' },
          ],
        },
      },
      ...spec,
    },
  }) as unknown as VirtualMachinePool;

const member = (name: string, created: string, extra: Partial<VirtualMachine['metadata']> = {}, phase = 'Running'): VirtualMachine =>
  ({ metadata: { name, creationTimestamp: created, ...extra }, spec: { blockDeviceRefs: [] }, status: { phase } }) as unknown as VirtualMachine;

describe('pool members', () => {
  it('resolve disk-template placeholders per member and keep shared images as written', () => {
    const refs = resolveRefs(pool(), 'web-abcde', [], (t) => (t.name === 'root' ? 'web-abcde-root' : 'web-data-bcdfgh'));
    expect(refs).toEqual([
      { kind: 'VirtualDisk', name: 'web-abcde-root' },
      { kind: 'VirtualImage', name: 'shared' },
      { kind: 'VirtualDisk', name: 'web-data-bcdfgh' },
    ]);
    // A member that has its disks keeps them; the picker is not asked.
    const again = resolveRefs(pool(), 'web-abcde', refs, () => {
      throw new Error('asked');
    });
    expect(again).toEqual(refs);
  });

  it('tell which template a disk name belongs to', () => {
    const [root, data] = pool().spec.virtualDiskTemplates;
    expect(isDiskOfTemplate('web', 'web-abcde', root, 'web-abcde-root')).toBe(true);
    expect(isDiskOfTemplate('web', 'web-abcde', root, 'web-zzzzz-root')).toBe(false);
    expect(isDiskOfTemplate('web', 'web-abcde', data, retainDiskName('web', 'data', randomSuffix(6)))).toBe(true);
    expect(isDiskOfTemplate('web', 'web-abcde', data, 'web-data-x')).toBe(false);
  });

  it('pick scale-down victims by policy; Explicit never picks', () => {
    const vms = [member('b', '2026-01-02T00:00:00Z'), member('a', '2026-01-01T00:00:00Z'), member('c', '2026-01-03T00:00:00Z')];
    expect(pickVictims('NewestFirst', vms, 2).map((v) => v.metadata.name)).toEqual(['c', 'b']);
    expect(pickVictims('OldestFirst', vms, 1).map((v) => v.metadata.name)).toEqual(['a']);
    expect(pickVictims('Explicit', vms, 2)).toEqual([]);
    expect(pickVictims('NewestFirst', vms, 0)).toEqual([]);
  });

  it('hash the template only: replicas and disk templates do not change the revision', () => {
    expect(templateHash(pool())).toBe(templateHash(pool({ replicas: 7 })));
    const changed = pool();
    changed.spec.virtualMachineTemplate.metadata = { labels: { tier: 'b' } };
    expect(templateHash(changed)).not.toBe(templateHash(pool()));
  });

  it('count ready, updated and restart-pending members, and name a broken replica in Progressing', () => {
    const p = pool();
    const hash = templateHash(p);
    const vms = [
      member('web-a', '2026-01-01T00:00:00Z', { labels: { [POOL_LABELS.templateHash]: hash } }),
      member('web-b', '2026-01-01T00:00:00Z', { labels: { [POOL_LABELS.templateHash]: 'old' }, annotations: { [POOL_LABELS.patchedTemplateHash]: hash } }),
    ];
    (vms[1].status as { restartAwaitingChanges?: unknown[] }).restartAwaitingChanges = [{ path: 'cpu.cores' }];
    const { fields, conditions } = poolStatus(p, vms, [{ replica: 'web-c', message: 'VirtualDisk web-c-root could not be created: quota' }]);
    expect(fields).toMatchObject({
      replicas: 2,
      readyReplicas: 2,
      updatedReplicas: 1,
      restartPendingReplicas: 1,
      desiredTemplateHash: hash,
      selector: `${POOL_LABELS.poolUID}=u-pool`,
      observedGeneration: 2,
    });
    expect(conditions).toEqual([
      expect.objectContaining({ type: 'Available', status: 'True', reason: 'AllReplicasReady' }),
      expect.objectContaining({
        type: 'Progressing',
        status: 'True',
        message: expect.stringContaining('replica web-c: VirtualDisk web-c-root could not be created: quota'),
      }),
      expect.objectContaining({ type: 'Synced', status: 'False', reason: 'RestartPendingApproval' }),
    ]);
  });
});
