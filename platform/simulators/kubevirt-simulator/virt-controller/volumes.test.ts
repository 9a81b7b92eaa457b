import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { childLogger } from '../../../../shared/log/index.js';
import type { StepContext } from '../context.js';
import { migratedVolumesDone } from '../virt-handler/migration.js';
import { updateVolumes } from './volumes.js';

const pvc = (name: string, claimName: string) => ({ name, persistentVolumeClaim: { claimName } });
const kvvm = (claims: Record<string, string>, strategy?: 'Migration' | 'Replacement'): InternalVirtualMachine =>
  ({
    metadata: { name: 'web', namespace: 'ns' },
    spec: {
      ...(strategy === undefined ? {} : { updateVolumesStrategy: strategy }),
      template: { spec: { domain: {}, volumes: [...Object.entries(claims).map(([n, c]) => pvc(n, c)), { name: 'cloudinit', cloudInitNoCloud: {} }] } },
    },
  }) as unknown as InternalVirtualMachine;
const vmi = (claims: Record<string, string>, status: Record<string, unknown> = {}): InternalVirtualMachineInstance =>
  ({
    metadata: { name: 'web', namespace: 'ns' },
    spec: { domain: {}, volumes: [...Object.entries(claims).map(([n, c]) => pvc(n, c)), { name: 'cloudinit', cloudInitNoCloud: {} }] },
    status: { phase: 'Running', ...status },
  }) as unknown as InternalVirtualMachineInstance;

async function step(vm: InternalVirtualMachine, instance: InternalVirtualMachineInstance): Promise<Record<string, unknown>[]> {
  const patches: Record<string, unknown>[] = [];
  const ctx = {
    c: {
      kvvmis: {
        mergePatch: (_ref: unknown, body: Record<string, unknown>) => {
          patches.push(body);
          return Promise.resolve(instance);
        },
      },
    },
    log: childLogger({ component: 'volumes-test' }),
  } as unknown as StepContext;
  await updateVolumes(ctx, vm, instance);
  return patches;
}

describe("the simulated virt-controller's volume update", () => {
  it('puts a changed claim into the running instance with the Migration strategy: migratedVolumes, spec.volumes, VolumesChange', async () => {
    const [patch, ...more] = await step(kvvm({ 'vd-root': 'new', 'vd-data': 'data' }, 'Migration'), vmi({ 'vd-root': 'old', 'vd-data': 'data' }));
    expect(more).toEqual([]);
    expect(patch).toMatchObject({
      spec: { volumes: [pvc('vd-root', 'new'), pvc('vd-data', 'data'), { name: 'cloudinit', cloudInitNoCloud: {} }] },
      status: {
        migratedVolumes: [{ volumeName: 'vd-root', sourcePVCInfo: { claimName: 'old' }, destinationPVCInfo: { claimName: 'new' } }],
        conditions: [expect.objectContaining({ type: 'VolumesChange', status: 'True', message: 'migrate volumes' })],
      },
    });
  });

  it.each([
    ['without a strategy (KubeVirt asks for a restart)', kvvm({ 'vd-root': 'new' }), vmi({ 'vd-root': 'old' })],
    ['with the Replacement strategy', kvvm({ 'vd-root': 'new' }, 'Replacement'), vmi({ 'vd-root': 'old' })],
    ['when nothing changed', kvvm({ 'vd-root': 'old' }, 'Migration'), vmi({ 'vd-root': 'old' })],
    [
      'while another change is being migrated',
      kvvm({ a: 'a2', b: 'b2' }, 'Migration'),
      vmi({ a: 'a2', b: 'b1' }, { migratedVolumes: [{ volumeName: 'a', sourcePVCInfo: { claimName: 'a1' }, destinationPVCInfo: { claimName: 'a2' } }] }),
    ],
    ['for an instance that is not running', kvvm({ 'vd-root': 'new' }, 'Migration'), vmi({ 'vd-root': 'old' }, { phase: 'Scheduling' })],
  ])('leaves the instance alone %s', async (_what, vm, instance) => {
    expect(await step(vm, instance)).toEqual([]);
  });

  it('cancels when the VM names the source claims again: volumes restored, migratedVolumes gone, VolumesChange False', async () => {
    const migrating = vmi(
      { 'vd-root': 'new' },
      { migratedVolumes: [{ volumeName: 'vd-root', sourcePVCInfo: { claimName: 'old' }, destinationPVCInfo: { claimName: 'new' } }] },
    );
    const [patch] = await step(kvvm({ 'vd-root': 'old' }), migrating);
    expect(patch).toMatchObject({
      spec: { volumes: [pvc('vd-root', 'old'), { name: 'cloudinit', cloudInitNoCloud: {} }] },
      status: { migratedVolumes: null, conditions: [expect.objectContaining({ type: 'VolumesChange', status: 'False', reason: 'VolumesChangeCancellation' })] },
    });
  });

  it("virt-handler's end of a volume migration names the destination claims in volumeStatus and clears the change", () => {
    const done = migratedVolumesDone(
      vmi(
        { 'vd-root': 'new' },
        {
          migratedVolumes: [{ volumeName: 'vd-root', sourcePVCInfo: { claimName: 'old' }, destinationPVCInfo: { claimName: 'new' } }],
          volumeStatus: [{ name: 'vd-root', target: 'sda', persistentVolumeClaimInfo: { claimName: 'old' } }],
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'VolumesChange', status: 'True' },
          ],
        },
      ),
    );
    expect(done).toEqual({
      migratedVolumes: null,
      conditions: [{ type: 'Ready', status: 'True' }],
      volumeStatus: [{ name: 'vd-root', target: 'sda', persistentVolumeClaimInfo: { claimName: 'new' } }],
    });
    expect(migratedVolumesDone(vmi({ 'vd-root': 'old' }))).toEqual({});
  });
});
