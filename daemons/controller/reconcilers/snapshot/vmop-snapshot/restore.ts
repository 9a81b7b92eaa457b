/**
 * VirtualMachineOperation Restore of a stopped VM from a Ready VirtualMachineSnapshot of it: the VM's
 * spec is set back to the captured one, and each captured disk is deleted and created again under
 * its name from its disk snapshot (tagged `vmoprestore=<operation uid>`, so a later pass knows it is
 * done); Completed when every restored disk is Ready. The VM's protection finalizer on an old disk is
 * removed with it (the VM is stopped). DryRun only lists what would be restored; Strict and
 * BestEffort both restore everything. Not restored: the VM's address, attachments (VMBDA).
 */
import { VMOPCondition } from '../../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import { API_VERSION } from '../../../../../shared/api/resources/common.js';
import { AlreadyExistsError, NotFoundError } from '../../../../../shared/errors/index.js';
import { hasFinalizer, removeFinalizer } from '../../../../../shared/kube/index.js';
import { deepEqual } from '../../../engine/merge-diff.js';
import type { OpContext, Operation, OperationResource, Progress } from '../../vmop/operation.js';
import { diskFromSnapshot, readCaptured } from '../captured.js';
import type { SnapshotDeps } from '../deps.js';

/** The annotation on a disk a Restore made: the operation's uid (the original's name). */
export const RESTORED_BY = 'virtualization.deckhouse.io/vmoprestore';

const R = VMOPCondition.Completed.reason;

export function restoreOperation(d: SnapshotDeps): Operation {
  return {
    inProgressReason: R.RestoreInProgress,
    signal: () => Promise.resolve(undefined),
    check: (c) => checkRestore(d, c),
    cleanup: () => Promise.resolve(true),
  };
}

const resource = (kind: string, name: string, status: OperationResource['status'], message: string): OperationResource => ({
  apiVersion: API_VERSION,
  kind,
  name,
  status,
  message,
});

async function checkRestore(d: SnapshotDeps, c: OpContext): Promise<Progress> {
  const restore = c.vmop.spec.restore;
  if (restore === undefined) return { state: 'failed', message: 'Restore requires the restore field' };
  const ns = c.vmop.metadata.namespace ?? '';
  const uid = c.vmop.metadata.uid ?? '';
  const got = await readCaptured(d, ns, restore.virtualMachineSnapshotName, c.signal);
  if (!got.ok) {
    if (got.waiting) return { state: 'waiting', reason: R.RestoreInProgress, message: got.message, recheckMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
    return { state: 'failed', message: got.message };
  }
  const { vm, disks } = got.captured;
  if (vm.metadata.name !== c.vm.metadata.name) {
    return {
      state: 'failed',
      message: `VirtualMachineSnapshot ${restore.virtualMachineSnapshotName} is a snapshot of VirtualMachine ${vm.metadata.name ?? ''}`,
    };
  }
  const vmName = c.vm.metadata.name ?? '';
  if (restore.mode === 'DryRun') {
    return {
      state: 'done',
      resources: [
        resource('VirtualMachine', vmName, 'Completed', 'the spec would be restored'),
        ...disks.map((x) => resource('VirtualDisk', x.disk.metadata.name ?? '', 'Completed', `would be recreated from ${x.snapshot}`)),
      ],
    };
  }
  // The spec first, so the VM does not start on the old one with the new disks.
  if (!deepEqual(c.vm.spec, vm.spec)) {
    d.caches.vms.remember(
      await d.clients.vms.jsonPatch(
        { namespace: ns, name: vmName },
        [
          { op: 'test', path: '/metadata/resourceVersion', value: c.vm.metadata.resourceVersion },
          { op: 'replace', path: '/spec', value: vm.spec },
        ],
        { signal: c.signal },
      ),
    );
  }
  const resources: OperationResource[] = [resource('VirtualMachine', vmName, 'Completed', 'spec restored')];
  for (const captured of disks) {
    const name = captured.disk.metadata.name ?? '';
    const current = d.caches.disks.get(`${ns}/${name}`);
    if (current === undefined) {
      try {
        d.caches.disks.remember(await d.clients.disks.create(diskFromSnapshot(captured, name, ns, { [RESTORED_BY]: uid }), { signal: c.signal }));
      } catch (err: unknown) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
      resources.push(resource('VirtualDisk', name, 'InProgress', `recreating from ${captured.snapshot}`));
    } else if (current.metadata.annotations?.[RESTORED_BY] !== uid) {
      // The old disk goes (its PVC with it), also when the stopped VM still protects it.
      if (hasFinalizer(current, Finalizer.vdProtection)) await removeFinalizer(d.clients.disks, current, Finalizer.vdProtection, { signal: c.signal });
      if (current.metadata.deletionTimestamp === undefined) {
        try {
          await d.clients.disks.delete({ namespace: ns, name }, { signal: c.signal });
        } catch (err: unknown) {
          if (!(err instanceof NotFoundError)) throw err;
        }
      }
      resources.push(resource('VirtualDisk', name, 'InProgress', 'removing the current disk'));
    } else {
      const ready = current.status?.phase === 'Ready';
      resources.push(resource('VirtualDisk', name, ready ? 'Completed' : 'InProgress', `restored from ${captured.snapshot}`));
    }
  }
  if (resources.some((r) => r.status !== 'Completed')) {
    return { state: 'waiting', reason: R.RestoreInProgress, message: 'restoring the disks', resources, recheckMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
  }
  return { state: 'done', resources };
}
