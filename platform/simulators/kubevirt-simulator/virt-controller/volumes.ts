/**
 * virt-controller's volume update, as KubeVirt v1.6 does it (`vm.go` handleVolumeUpdateRequest and
 * `watch/volume-migration`): when a running instance's volume names another claim in the internal VM
 * than in the instance, and the VM's `updateVolumesStrategy` is `Migration`, the instance's
 * `status.migratedVolumes` gets each volume's source and destination claim, its `spec.volumes` take
 * the VM's, and its condition `VolumesChange` is True ("migrate volumes"): a live migration then copies
 * the data (virt-handler clears both when it finishes: ../virt-handler/migration.ts `migratedVolumesDone`). Claims set back
 * to the sources of an unfinished volume migration cancel it (`VolumesChangeCancellation`). With the
 * `Replacement` strategy (or none) nothing happens to the instance (KubeVirt asks for a restart).
 * One change at a time: while `migratedVolumes` is set a further change waits.
 */
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { ref, withConditions, type StepContext } from '../context.js';

type VMI = InternalVirtualMachineInstance;
type Volume = NonNullable<VMI['spec']['volumes']>[number];

const VOLUMES_CHANGE = 'VolumesChange';
const FINAL = new Set(['Succeeded', 'Failed']);

const claimsOf = (volumes: readonly Volume[] | undefined): Map<string, string> =>
  new Map((volumes ?? []).flatMap((v) => (v.persistentVolumeClaim === undefined ? [] : [[v.name, v.persistentVolumeClaim.claimName] as const])));

export async function updateVolumes(ctx: StepContext, kvvm: InternalVirtualMachine, vmi: VMI): Promise<void> {
  if (vmi.metadata.deletionTimestamp !== undefined || FINAL.has(vmi.status?.phase ?? '') || vmi.status?.phase !== 'Running') return;
  const wanted = kvvm.spec.template.spec.volumes ?? [];
  const want = claimsOf(wanted);
  const have = claimsOf(vmi.spec.volumes);
  const changed = [...have].filter(([name, claim]) => want.has(name) && want.get(name) !== claim);
  if (changed.length === 0) return;
  const migrated = vmi.status.migratedVolumes ?? [];
  const key = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
  const volumes = (vmi.spec.volumes ?? []).map((v) => (changed.some(([name]) => name === v.name) ? (wanted.find((w) => w.name === v.name) ?? v) : v));
  const patch = (body: Record<string, unknown>): Promise<VMI> => ctx.c.kvvmis.mergePatch(ref(vmi.metadata.namespace ?? '', vmi.metadata.name ?? ''), body);
  const cancel = changed.every(([name]) => migrated.some((m) => m.volumeName === name && m.sourcePVCInfo?.claimName === want.get(name)));
  if (migrated.length > 0 && cancel) {
    ctx.log.info({ vm: key }, 'volume migration cancelled: the VM names the source claims again');
    const conditions = withConditions(vmi.status.conditions, [{ type: VOLUMES_CHANGE, status: 'False', reason: 'VolumesChangeCancellation' }]);
    await patch({ spec: { volumes }, status: { migratedVolumes: null, conditions } });
    return;
  }
  if (kvvm.spec.updateVolumesStrategy !== 'Migration' || migrated.length > 0) return;
  const migratedVolumes = changed.map(([name, claim]) => ({
    volumeName: name,
    sourcePVCInfo: { claimName: claim },
    destinationPVCInfo: { claimName: want.get(name) ?? '' },
  }));
  ctx.log.info({ vm: key, volumes: migratedVolumes.map((m) => m.volumeName) }, 'volumes to migrate: the instance takes the new claims');
  const conditions = withConditions(vmi.status.conditions, [{ type: VOLUMES_CHANGE, status: 'True', message: 'migrate volumes' }]);
  await patch({ spec: { volumes }, status: { migratedVolumes, conditions } });
}
