/**
 * The volume-migration reconciler (the original's volumemigration-controller), keyed by VM: once
 * KubeVirt has taken a disk's new claim into the running instance (`VolumesChange=True`, the swap in
 * `status.migratedVolumes`), a `Migrate` VirtualMachineOperation annotated
 * `virtualization.deckhouse.io/volume-migration: "true"` moves the instance, and with it the data,
 * to the new claims (the vmop reconciler makes the KubeVirt migration).
 * - No new operation while a Migrate or Evict of the VM is unfinished.
 * - One operation per volume change, named after it (`<vm>-volume-migration-<hash of the new claims>`):
 *   it is not made again, whatever its end (a failed one is the disks' to revert).
 */
import { createHash } from 'node:crypto';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { AlreadyExistsError } from '../../../../shared/errors/index.js';
import type { ResourcePort } from '../../../../shared/kube/index.js';
import { childLogger, type Logger } from '../../../../shared/log/index.js';
import type { CachePort } from '../../deps.js';
import type { ObjectCache } from '../../engine/cache.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { VMOP_BY_VM } from '../vmop/index.js';

/** The original's annotation on the operations it creates for a volume migration. */
export const VOLUME_MIGRATION_ANNOTATION = 'virtualization.deckhouse.io/volume-migration';
/** KubeVirt's instance condition while changed volumes wait to be migrated. */
export const VOLUMES_CHANGE = 'VolumesChange';

export interface VolumeMigrationDeps {
  vms: Pick<CachePort<VirtualMachine>, 'get'>;
  vmops: Pick<ObjectCache<VirtualMachineOperation>, 'byIndex' | 'remember'>;
  vmopClient: ResourcePort<VirtualMachineOperation>;
  kvvmis: Pick<CachePort<InternalVirtualMachineInstance>, 'get'>;
  logger?: Logger;
}

const FINAL = new Set(['Completed', 'Failed', 'Superseded']);
const isMigration = (op: VirtualMachineOperation): boolean => op.spec.type === 'Migrate' || op.spec.type === 'Evict';

/** The volume change the instance waits to migrate (its new claims, sorted and joined), if any. */
export function pendingVolumeChange(vmi: InternalVirtualMachineInstance | undefined): string | undefined {
  const changing = vmi?.status?.conditions?.some((c) => c.type === VOLUMES_CHANGE && c.status === 'True') === true;
  const claims = (vmi?.status?.migratedVolumes ?? []).map((m) => m.destinationPVCInfo?.claimName ?? '').sort();
  return changing && claims.length > 0 ? claims.join(',') : undefined;
}

export function volumeMigrationOperation(vm: VirtualMachine, change: string): VirtualMachineOperation {
  const hash = createHash('sha256').update(change).digest('hex').slice(0, 10);
  return {
    apiVersion: 'virtualization.deckhouse.io/v1alpha2',
    kind: 'VirtualMachineOperation',
    metadata: {
      name: `${vm.metadata.name ?? ''}-volume-migration-${hash}`,
      namespace: vm.metadata.namespace,
      annotations: { [VOLUME_MIGRATION_ANNOTATION]: 'true' },
    },
    spec: { type: 'Migrate', virtualMachineName: vm.metadata.name ?? '' },
  };
}

export function volumeMigrationReconciler(d: VolumeMigrationDeps): ReconcileFn {
  const log = d.logger ?? childLogger({ component: 'controller', controller: 'volume-migration' });
  return async (key, signal) => {
    const vm = d.vms.get(key);
    if (vm === undefined || vm.metadata.deletionTimestamp !== undefined) return;
    const change = pendingVolumeChange(d.kvvmis.get(key));
    if (change === undefined) return;
    const ops = d.vmops.byIndex(VMOP_BY_VM, key).filter(isMigration);
    if (ops.some((op) => !FINAL.has(op.status?.phase ?? ''))) return;
    const want = volumeMigrationOperation(vm, change);
    if (ops.some((op) => op.metadata.name === want.metadata.name)) return;
    try {
      const created = d.vmops.remember(await d.vmopClient.create(want, { signal }));
      log.info({ object: key, operation: created.metadata.name, claims: change }, 'volumes of the running VM changed: Migrate operation created');
    } catch (err: unknown) {
      // Made already for this change (the cache had not seen it yet): one operation per change.
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
  };
}
