/**
 * VirtualMachineSnapshot: one VirtualDiskSnapshot per disk of the VM (spec blockDeviceRefs and
 * attachments; images are read-only and not snapshotted) and a Secret holding the VM as it was (its
 * spec, its disks' specs and, with keepIPAddress Always, its address), all controlled by the
 * snapshot. Pending (waiting for the VM or its disks to settle) → InProgress → Ready once every disk
 * snapshot is Ready, or Failed (the VM is missing, a disk snapshot failed or vanished). A running VM
 * with requiredConsistency is frozen once through the subresource API (its guest agent connected)
 * for all its disk snapshots and thawed when they are done; without an agent it waits InProgress
 * (PotentiallyInconsistent).
 */
import { VMSnapshotCondition } from '../../../../../shared/api/conditions/index.js';
import { API_VERSION } from '../../../../../shared/api/resources/common.js';
import type { VirtualMachineSnapshot, VirtualDiskSnapshot } from '../../../../../shared/api/resources/snapshots.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { AlreadyExistsError } from '../../../../../shared/errors/index.js';
import { hasControllerReference, ownerReferenceTo, type KubeObject, objectKey } from '../../../../../shared/kube/index.js';
import { conditionOn } from '../../../engine/conditions.js';
import { clone, type Handler, type HandlerContext, type HandlerOutcome, type ReconcileState } from '../../../engine/reconciler.js';
import type { ReconcileFn } from '../../../engine/runner.js';
import { shortName } from '../../provisioning/importer.js';
import { VMBDA_BY_VM } from '../../vmbda/index.js';
import type { SnapshotDeps } from '../deps.js';
import { snapshotChain } from '../parts.js';
import { FROZEN_VM, agentConnected, stillNeededFrozen } from '../freeze.js';

type Status = NonNullable<VirtualMachineSnapshot['status']>;
interface VMSState extends ReconcileState<VirtualMachineSnapshot, Status> {
  vm?: VirtualMachine;
  disks: string[];
  running: boolean;
  /** Freeze the running VM for the capture. */
  freeze: boolean;
}

const C = VMSnapshotCondition;
const R = C.VirtualMachineSnapshotReady.reason;

/** `VirtualMachineSnapshot` cache index: `<ns>/<vm name>` → the snapshots of that VM. */
export const VMS_BY_VM = 'vmsnapshot-by-vm';

/** The Secret type of a VM snapshot's captured objects, and its keys (JSON each). */
export const SNAPSHOT_SECRET_TYPE = 'virtualization.deckhouse.io/snapshot';
export const SnapshotSecretKey = { vm: 'virtualMachine', disks: 'virtualDisks', address: 'virtualMachineIPAddress' } as const;

/** VM phases that settle by themselves: the snapshot waits for them to end. */
const TRANSITIONAL = new Set(['Pending', 'Starting', 'Stopping', 'Migrating', undefined]);

export function secretNameOf(vms: VirtualMachineSnapshot): string {
  return shortName(['d8v', 'vms', vms.metadata.name ?? '', vms.metadata.uid ?? ''], 253);
}

/** The disk snapshot of one disk: `<vms name>-<disk name>`, shortened with a hash when long. */
export function diskSnapshotNameOf(vms: VirtualMachineSnapshot, disk: string): string {
  return shortName([vms.metadata.name ?? '', disk], 253);
}

export function vmSnapshotReconciler(d: SnapshotDeps): ReconcileFn {
  const cache = d.snapshots.caches.vmSnapshots;
  return snapshotChain<VirtualMachineSnapshot, Status, VMSState>(cache, d.snapshots.clients.vmSnapshots, {
    name: 'vmsnapshot',
    init: (vms) => ({ obj: vms, status: clone(vms.status) ?? { phase: 'Pending' }, disks: [], running: false, freeze: false }),
    handlers: [deletion(d), final(), virtualMachine(d), consistency(d), capture(d), follow(d)],
  });
}

/** What it made is controlled by it: the garbage collector removes the disk snapshots and the Secret; a VM it froze is thawed. */
function deletion(d: SnapshotDeps): Handler<VMSState> {
  return {
    name: 'deletion',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      if (s.obj.metadata.deletionTimestamp === undefined) return;
      if (s.obj.status?.phase === 'InProgress') await thaw(d, s, ctx);
      s.status.phase = 'Terminating';
      return { stop: true };
    },
  };
}

/** The VM this snapshot froze (its disk snapshots carry its name), thawed if it still runs. */
async function thaw(d: SnapshotDeps, s: VMSState, ctx: HandlerContext): Promise<void> {
  const ns = s.obj.metadata.namespace ?? '';
  const frozen = (s.status.virtualDiskSnapshotNames ?? [])
    .map((name) => d.snapshots.caches.vdSnapshots.get(`${ns}/${name}`)?.metadata.annotations?.[FROZEN_VM])
    .find((vm) => vm !== undefined);
  if (frozen === undefined || d.caches.kvvmis.get(`${ns}/${frozen}`) === undefined) return;
  if (stillNeededFrozen(d, ns, frozen, { vmSnapshot: s.obj.metadata.name })) {
    ctx.log.info({ vm: frozen }, 'filesystems stay frozen for another snapshot');
    return;
  }
  await d.snapshots.filesystems.unfreeze(ns, frozen, ctx.signal);
  ctx.log.info({ vm: frozen }, 'filesystems thawed');
}

function final(): Handler<VMSState> {
  return {
    name: 'final',
    handle(s): HandlerOutcome | void {
      s.status.observedGeneration = s.obj.metadata.generation;
      if (s.obj.status?.phase === 'Failed') return { stop: true };
    },
  };
}

function fail(s: VMSState, ctx: HandlerContext, reason: string, message: string): HandlerOutcome {
  conditionOn(s, ctx, { type: C.VirtualMachineSnapshotReady.type, status: 'False', reason, message });
  s.status.phase = 'Failed';
  return { stop: true };
}

function wait(d: SnapshotDeps, s: VMSState, ctx: HandlerContext, reason: string, message: string): HandlerOutcome {
  conditionOn(s, ctx, { type: C.VirtualMachineSnapshotReady.type, status: 'False', reason, message });
  s.status.phase = 'Pending';
  return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
}

/** The disks of a VM: spec blockDeviceRefs and attachments, VirtualDisks only, in that order. */
function disksOf(d: SnapshotDeps, vm: VirtualMachine): string[] {
  const key = objectKey(vm.metadata);
  const names = vm.spec.blockDeviceRefs.filter((r) => r.kind === 'VirtualDisk').map((r) => r.name);
  for (const a of d.storage.caches.vmbdas.byIndex(VMBDA_BY_VM, key)) {
    if (a.spec.blockDeviceRef.kind === 'VirtualDisk' && a.metadata.deletionTimestamp === undefined) names.push(a.spec.blockDeviceRef.name);
  }
  return [...new Set(names)];
}

/** Before the capture: the VM exists and is settled, and every disk of it is Ready. */
function virtualMachine(d: SnapshotDeps): Handler<VMSState> {
  return {
    name: 'virtualMachine',
    handle(s, ctx): HandlerOutcome | void {
      const ns = s.obj.metadata.namespace ?? '';
      const name = s.obj.spec.virtualMachineName;
      const vm = d.caches.vms.get(`${ns}/${name}`);
      if (vm !== undefined) s.vm = vm;
      if (s.status.virtualMachineSnapshotSecretName !== undefined) return;
      const notReady = (message: string): void =>
        conditionOn(s, ctx, {
          type: C.VirtualMachineReady.type,
          status: 'False',
          reason: C.VirtualMachineReady.reason.VirtualMachineNotReadyForSnapshotting,
          message,
        });
      if (vm === undefined || vm.metadata.deletionTimestamp !== undefined) {
        const message = vm === undefined ? `VirtualMachine ${name} does not exist in namespace ${ns}` : `VirtualMachine ${name} is being deleted`;
        notReady(message);
        return fail(s, ctx, R.VirtualMachineSnapshotFailed, message);
      }
      if (TRANSITIONAL.has(vm.status?.phase)) {
        const message = `waiting for VirtualMachine ${name} to settle (phase ${vm.status?.phase ?? 'unset'})`;
        notReady(message);
        return wait(d, s, ctx, R.WaitingForTheVirtualMachine, message);
      }
      conditionOn(s, ctx, { type: C.VirtualMachineReady.type, status: 'True', reason: C.VirtualMachineReady.reason.VirtualMachineReady });
      s.disks = disksOf(d, vm);
      const unready = s.disks.filter((disk) => d.caches.disks.get(`${ns}/${disk}`)?.status?.phase !== 'Ready');
      if (unready.length > 0) return wait(d, s, ctx, R.BlockDevicesNotReady, `waiting for the VirtualDisks ${unready.join(', ')} to be Ready`);
      s.running = d.caches.kvvmis.get(`${ns}/${name}`) !== undefined;
    },
  };
}

function consistency(d: SnapshotDeps): Handler<VMSState> {
  return {
    name: 'consistency',
    handle(s, ctx): HandlerOutcome | void {
      if (s.status.virtualMachineSnapshotSecretName !== undefined || !s.running || !s.obj.spec.requiredConsistency) return;
      const name = s.obj.spec.virtualMachineName;
      if (agentConnected(d.caches.kvvmis.get(objectKey({ namespace: s.obj.metadata.namespace, name })))) {
        s.freeze = true;
        return;
      }
      conditionOn(s, ctx, {
        type: C.VirtualMachineSnapshotReady.type,
        status: 'False',
        reason: R.PotentiallyInconsistent,
        message:
          `VirtualMachine ${name} is running and its guest agent is not connected, so its filesystems cannot be frozen: ` +
          'waiting for the agent or for the VM to stop (or snapshot with requiredConsistency: false)',
      });
      s.status.phase = 'InProgress';
      return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
    },
  };
}

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');
/** An object as a user would apply it again: no status, no server-set metadata. */
const asApplied = (o: KubeObject & { spec?: unknown }): unknown => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  metadata: { name: o.metadata.name, namespace: o.metadata.namespace, labels: o.metadata.labels, annotations: o.metadata.annotations },
  spec: o.spec,
});

/** Once: the Secret with the VM as it is, then one disk snapshot per disk; recorded in status. */
function capture(d: SnapshotDeps): Handler<VMSState> {
  return {
    name: 'capture',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      if (s.status.virtualMachineSnapshotSecretName !== undefined) return;
      const vms = s.obj;
      const vm = s.vm;
      if (vm === undefined) return { stop: true };
      const ns = vms.metadata.namespace ?? '';
      const disks = s.disks.flatMap((name) => d.caches.disks.get(`${ns}/${name}`) ?? []);
      const data: Record<string, string> = { [SnapshotSecretKey.vm]: b64(asApplied(vm)), [SnapshotSecretKey.disks]: b64(disks.map(asApplied)) };
      const resources = [{ apiVersion: API_VERSION, kind: 'VirtualMachine', name: vm.metadata.name ?? '' }];
      const addressName = vm.status?.virtualMachineIPAddressName;
      const address = addressName === undefined ? undefined : d.caches.vmips.get(`${ns}/${addressName}`);
      if (vms.spec.keepIPAddress === 'Always' && address !== undefined) {
        data[SnapshotSecretKey.address] = b64({ ...(asApplied(address) as object), status: { address: address.status?.address } });
        resources.push({ apiVersion: API_VERSION, kind: 'VirtualMachineIPAddress', name: address.metadata.name ?? '' });
      }
      const owner = [{ ...ownerReferenceTo(vms, { controller: true, blockOwnerDeletion: true }) }];
      if (s.freeze) {
        conditionOn(s, ctx, {
          type: C.VirtualMachineSnapshotReady.type,
          status: 'False',
          reason: R.FileSystemFreezing,
          message: `freezing VirtualMachine ${vm.metadata.name ?? ''}`,
        });
        await d.snapshots.filesystems.freeze(ns, vm.metadata.name ?? '', ctx.signal);
        ctx.log.info({ vm: vm.metadata.name }, 'filesystems frozen');
      }
      const secretName = secretNameOf(vms);
      await createOnce(
        d.clients.secrets,
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: secretName, namespace: ns, ownerReferences: owner }, type: SNAPSHOT_SECRET_TYPE, data },
        ctx.signal,
      );
      const names: string[] = [];
      for (const disk of disks) {
        const name = diskSnapshotNameOf(vms, disk.metadata.name ?? '');
        const want: VirtualDiskSnapshot = {
          apiVersion: API_VERSION,
          kind: 'VirtualDiskSnapshot',
          metadata: {
            name,
            namespace: ns,
            ownerReferences: owner,
            labels: { 'virtualization.deckhouse.io/virtual-machine-snapshot': vms.metadata.name ?? '' },
            // Frozen by this snapshot: the disk snapshot does not freeze again.
            ...(s.freeze ? { annotations: { [FROZEN_VM]: vm.metadata.name ?? '' } } : {}),
          },
          spec: { virtualDiskName: disk.metadata.name ?? '', requiredConsistency: s.freeze ? false : vms.spec.requiredConsistency },
        };
        const got = await createOnce(d.snapshots.clients.vdSnapshots, want, ctx.signal);
        if (!hasControllerReference(got, vms))
          return fail(s, ctx, R.VirtualMachineSnapshotFailed, `VirtualDiskSnapshot ${name} exists and does not belong to this snapshot`);
        d.snapshots.caches.vdSnapshots.remember(got);
        names.push(name);
        resources.push({ apiVersion: API_VERSION, kind: 'VirtualDisk', name: disk.metadata.name ?? '' });
      }
      s.status.virtualMachineSnapshotSecretName = secretName;
      s.status.virtualDiskSnapshotNames = names;
      s.status.resources = resources;
      s.status.consistent = !s.running || s.freeze;
    },
  };
}

async function createOnce<T extends KubeObject>(
  client: {
    create(o: T, opts: { signal: AbortSignal }): Promise<T>;
    get(ref: { namespace?: string | undefined; name: string }, opts: { signal: AbortSignal }): Promise<T>;
  },
  want: T,
  signal: AbortSignal,
): Promise<T> {
  try {
    return await client.create(want, { signal });
  } catch (err: unknown) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    return client.get({ namespace: want.metadata.namespace, name: want.metadata.name ?? '' }, { signal });
  }
}

/** Ready when every disk snapshot is; Failed when one failed or vanished. */
function follow(d: SnapshotDeps): Handler<VMSState> {
  return {
    name: 'follow',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const ns = s.obj.metadata.namespace ?? '';
      const names = s.status.virtualDiskSnapshotNames ?? [];
      const waiting: string[] = [];
      let consistent = s.status.consistent !== false;
      const settled = s.obj.status?.phase === 'Ready' || s.obj.status?.phase === 'Failed';
      for (const name of names) {
        const vds = d.snapshots.caches.vdSnapshots.get(`${ns}/${name}`);
        if (vds === undefined) return fail(s, ctx, R.VirtualDiskSnapshotLost, `VirtualDiskSnapshot ${name} is gone`);
        if (vds.status?.phase === 'Failed') {
          if (!settled) await thaw(d, s, ctx);
          const why = vds.status.conditions?.find((x) => x.type === 'VirtualDiskSnapshotReady')?.message ?? '';
          return fail(s, ctx, R.VirtualMachineSnapshotFailed, `VirtualDiskSnapshot ${name} failed: ${why}`);
        }
        if (vds.status?.phase !== 'Ready') waiting.push(name);
        // Taken frozen by this snapshot: consistent whatever the disk snapshot could tell alone.
        else if (vds.status.consistent === false && vds.metadata.annotations?.[FROZEN_VM] === undefined) consistent = false;
      }
      if (waiting.length > 0) {
        conditionOn(s, ctx, {
          type: C.VirtualMachineSnapshotReady.type,
          status: 'False',
          reason: R.Snapshotting,
          message: `waiting for ${waiting.join(', ')}`,
        });
        s.status.phase = 'InProgress';
        return;
      }
      if (!settled) await thaw(d, s, ctx);
      s.status.consistent = consistent;
      conditionOn(s, ctx, { type: C.VirtualMachineSnapshotReady.type, status: 'True', reason: R.VirtualMachineSnapshotReady });
      s.status.phase = 'Ready';
    },
  };
}
