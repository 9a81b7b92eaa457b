import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { AlreadyExistsError } from '../../../../shared/errors/index.js';
import type { ResourcePort } from '../../../../shared/kube/index.js';
import { VOLUME_MIGRATION_ANNOTATION, pendingVolumeChange, volumeMigrationOperation, volumeMigrationReconciler } from './reconciler.js';

const KEY = 'ns/web';
const vm = {
  apiVersion: 'virtualization.deckhouse.io/v1alpha2',
  kind: 'VirtualMachine',
  metadata: { name: 'web', namespace: 'ns' },
} as unknown as VirtualMachine;

const vmi = (claims: string[], changing = true): InternalVirtualMachineInstance =>
  ({
    metadata: { name: 'web', namespace: 'ns' },
    spec: { domain: {} },
    status: {
      conditions: changing ? [{ type: 'VolumesChange', status: 'True', message: 'migrate volumes' }] : [],
      migratedVolumes: claims.map((c, i) => ({
        volumeName: `vd-${String(i)}`,
        sourcePVCInfo: { claimName: `old-${c}` },
        destinationPVCInfo: { claimName: c },
      })),
    },
  }) as unknown as InternalVirtualMachineInstance;

const op = (name: string, phase: string | undefined): VirtualMachineOperation =>
  ({
    metadata: { name, namespace: 'ns', annotations: { [VOLUME_MIGRATION_ANNOTATION]: 'true' } },
    spec: { type: 'Migrate', virtualMachineName: 'web' },
    ...(phase === undefined ? {} : { status: { phase } }),
  }) as unknown as VirtualMachineOperation;

async function run(state: { vmi?: InternalVirtualMachineInstance; ops?: VirtualMachineOperation[]; taken?: boolean }): Promise<VirtualMachineOperation[]> {
  const created: VirtualMachineOperation[] = [];
  const vmopClient = {
    create: (o: VirtualMachineOperation) => {
      if (state.taken === true) return Promise.reject(new AlreadyExistsError('taken'));
      created.push(o);
      return Promise.resolve(o);
    },
  } as unknown as ResourcePort<VirtualMachineOperation>;
  const reconcile = volumeMigrationReconciler({
    vms: { get: (k: string) => (k === KEY ? vm : undefined) },
    vmops: { byIndex: () => state.ops ?? [], remember: (o: VirtualMachineOperation) => o },
    kvvmis: { get: () => state.vmi },
    vmopClient,
  });
  await reconcile(KEY, new AbortController().signal);
  return created;
}

describe('volume-migration reconciler', () => {
  it('makes one Migrate operation, annotated and named after the new claims, for an instance whose volumes change', async () => {
    const created = await run({ vmi: vmi(['b', 'a']) });
    expect(created).toHaveLength(1);
    expect(created[0]?.spec).toEqual({ type: 'Migrate', virtualMachineName: 'web' });
    expect(created[0]?.metadata.annotations).toEqual({ [VOLUME_MIGRATION_ANNOTATION]: 'true' });
    expect(created[0]?.metadata.name).toBe(volumeMigrationOperation(vm, 'a,b').metadata.name);
    expect(created[0]?.metadata.name).toMatch(/^web-volume-migration-[0-9a-f]{10}$/);
  });

  it.each([
    ['no instance', {}],
    ['no volume change', { vmi: vmi([], false) }],
    ['migratedVolumes without VolumesChange', { vmi: vmi(['a'], false) }],
    ['a migration of the VM still running', { vmi: vmi(['a']), ops: [op('other', 'InProgress')] }],
    ['the operation of this change already made (it failed)', { vmi: vmi(['a']), ops: [op(volumeMigrationOperation(vm, 'a').metadata.name ?? '', 'Failed')] }],
  ])('makes none with %s', async (_what, state) => {
    expect(await run(state)).toEqual([]);
  });

  it('makes the next one for a new change once the first finished', async () => {
    const first = op(volumeMigrationOperation(vm, 'a').metadata.name ?? '', 'Completed');
    expect(await run({ vmi: vmi(['b']), ops: [first] })).toHaveLength(1);
  });

  it('takes a name already taken (the cache lagged) as made', async () => {
    await expect(run({ vmi: vmi(['a']), taken: true })).resolves.toEqual([]);
  });

  it('reads the change as the sorted new claims', () => {
    expect(pendingVolumeChange(vmi(['z', 'y']))).toBe('y,z');
    expect(pendingVolumeChange(undefined)).toBeUndefined();
  });
});
