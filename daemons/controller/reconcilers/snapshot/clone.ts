/**
 * VirtualMachineOperation Clone of a stopped VM: a VirtualMachineSnapshot `d8v-vmop-<operation>` of
 * it (controlled by the operation), then a new VM and new disks filled from the disk snapshots, named
 * by nameReplacement, else namePrefix + name + nameSuffix; Completed when the new disks are Ready,
 * then the snapshot is deleted. DryRun only lists the names and fails on a name already taken;
 * Strict and BestEffort both fail on a taken name (nothing is overwritten). The new VM gets its own
 * address (virtualMachineIPAddressName is dropped).
 */
import { VMOPCondition } from '../../../../shared/api/conditions/index.js';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualMachineSnapshot } from '../../../../shared/api/resources/snapshots.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { AlreadyExistsError, NotFoundError } from '../../../../shared/errors/index.js';
import { ownerReferenceTo } from '../../../../shared/kube/index.js';
import type { OpContext, Operation, OperationResource, Progress } from '../vmop/operation.js';
import { shortName } from '../provisioning/importer.js';
import { diskFromSnapshot, readCaptured, type Captured } from './captured.js';
import type { SnapshotDeps } from './deps.js';

/** The annotation on what a Clone made: the operation's uid. */
export const CLONED_BY = 'virtualization.deckhouse.io/vmopclone';

const R = VMOPCondition.Completed.reason;
type CloneSpec = NonNullable<VirtualMachineOperation['spec']['clone']>;

/** The new name of a resource: an explicit replacement (kind empty = any), else prefix + name + suffix. */
export function cloneName(spec: CloneSpec, kind: string, name: string): string {
  const r = spec.nameReplacement?.find((x) => x.from.name === name && (x.from.kind === undefined || x.from.kind === '' || x.from.kind === kind));
  if (r !== undefined) return r.to;
  return `${spec.customization?.namePrefix ?? ''}${name}${spec.customization?.nameSuffix ?? ''}`;
}

export function cloneSnapshotName(vmop: VirtualMachineOperation): string {
  return shortName(['d8v', 'vmop', vmop.metadata.name ?? ''], 253);
}

export function cloneOperation(d: SnapshotDeps): Operation {
  return {
    inProgressReason: R.CloneInProgress,
    async signal(c) {
      if (c.vmop.spec.clone?.mode === 'DryRun') return undefined;
      const snapshot: VirtualMachineSnapshot = {
        apiVersion: API_VERSION,
        kind: 'VirtualMachineSnapshot',
        metadata: {
          name: cloneSnapshotName(c.vmop),
          namespace: c.vmop.metadata.namespace,
          ownerReferences: [{ ...ownerReferenceTo(c.vmop, { controller: true, blockOwnerDeletion: true }) }],
        },
        spec: { virtualMachineName: c.vm.metadata.name ?? '', keepIPAddress: 'Never', requiredConsistency: true },
      };
      try {
        d.snapshots.caches.vmSnapshots.remember(await d.snapshots.clients.vmSnapshots.create(snapshot, { signal: c.signal }));
      } catch (err: unknown) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
      return undefined;
    },
    check: (c) => checkClone(d, c),
    async cleanup(c) {
      try {
        await d.snapshots.clients.vmSnapshots.delete({ namespace: c.vmop.metadata.namespace, name: cloneSnapshotName(c.vmop) }, { signal: c.signal });
      } catch (err: unknown) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      return true;
    },
  };
}

interface Planned {
  kind: 'VirtualMachine' | 'VirtualDisk';
  from: string;
  to: string;
}

function plan(spec: CloneSpec, vm: Pick<VirtualMachine, 'metadata' | 'spec'>): Planned[] {
  const disks = vm.spec.blockDeviceRefs.filter((r) => r.kind === 'VirtualDisk').map((r) => r.name);
  return [
    { kind: 'VirtualMachine', from: vm.metadata.name ?? '', to: cloneName(spec, 'VirtualMachine', vm.metadata.name ?? '') },
    ...disks.map((name): Planned => ({ kind: 'VirtualDisk', from: name, to: cloneName(spec, 'VirtualDisk', name) })),
  ];
}

const resource = (p: Planned, status: OperationResource['status'], message: string): OperationResource => ({
  apiVersion: API_VERSION,
  kind: p.kind,
  name: p.to,
  status,
  message,
});

async function checkClone(d: SnapshotDeps, c: OpContext): Promise<Progress> {
  const spec = c.vmop.spec.clone;
  if (spec === undefined) return { state: 'failed', message: 'Clone requires the clone field' };
  const target: Target = { namespace: c.vmop.metadata.namespace ?? '', tag: { [CLONED_BY]: c.vmop.metadata.uid ?? '' }, spec };
  if (spec.mode === 'DryRun') return dryRun(d, target, c.vm);
  const got = await readCaptured(d, target.namespace, cloneSnapshotName(c.vmop), c.signal);
  if (!got.ok) {
    if (got.waiting) return { state: 'waiting', reason: R.CloneInProgress, message: got.message, recheckMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
    return { state: 'failed', message: got.message };
  }
  return createFromCaptured(d, target, got.captured, R.CloneInProgress, c.signal);
}

/** Where and how copies are made: the namespace, the annotation that marks them ours, the naming rules. */
export interface Target {
  namespace: string;
  /** One annotation (key → the operation's uid): an object carrying it was made by this operation. */
  tag: Record<string, string>;
  spec: CloneSpec;
}

function takenBy(d: SnapshotDeps, t: Target): (p: Planned) => boolean {
  const [key, value] = Object.entries(t.tag)[0] ?? ['', ''];
  return (p) => {
    const o = p.kind === 'VirtualMachine' ? d.caches.vms.get(`${t.namespace}/${p.to}`) : d.caches.disks.get(`${t.namespace}/${p.to}`);
    return o !== undefined && o.metadata.annotations?.[key] !== value;
  };
}

const takenMessage = (conflicts: Planned[]): string => `names already taken: ${conflicts.map((p) => p.to).join(', ')}`;

/** DryRun: the names the copies would get; Failed naming those already taken. */
export function dryRun(d: SnapshotDeps, t: Target, vm: Pick<VirtualMachine, 'metadata' | 'spec'>): Progress {
  const taken = takenBy(d, t);
  const planned = plan(t.spec, vm);
  const conflicts = planned.filter(taken);
  const resources = planned.map((p) =>
    taken(p) ? resource(p, 'Failed', `${p.kind} ${p.to} already exists`) : resource(p, 'Completed', `would clone ${p.from}`),
  );
  if (conflicts.length > 0) return { state: 'failed', message: takenMessage(conflicts), resources };
  return { state: 'done', resources };
}

/**
 * A new VM and disks from a captured VM (renamed by the rules, the disks filled from their
 * snapshots, the VM without its address name), done when the disks are Ready; nothing is overwritten.
 */
export async function createFromCaptured(d: SnapshotDeps, t: Target, captured: Captured, inProgressReason: string, signal: AbortSignal): Promise<Progress> {
  const ns = t.namespace;
  const { vm, disks } = captured;
  const taken = takenBy(d, t);
  const planned = plan(t.spec, vm);
  const conflicts = planned.filter(taken);
  if (conflicts.length > 0) {
    const resources = planned.map((p) => (taken(p) ? resource(p, 'Failed', `${p.kind} ${p.to} already exists`) : resource(p, 'InProgress', '')));
    return { state: 'failed', message: takenMessage(conflicts), resources };
  }
  const newName = new Map(planned.filter((p) => p.kind === 'VirtualDisk').map((p) => [p.from, p.to]));
  for (const one of disks) {
    const to = newName.get(one.disk.metadata.name ?? '');
    if (to === undefined || d.caches.disks.get(`${ns}/${to}`) !== undefined) continue;
    await createIgnoringExisting(() => d.clients.disks.create(diskFromSnapshot(one, to, ns, t.tag), { signal }));
  }
  const vmName = planned[0]?.to ?? '';
  if (d.caches.vms.get(`${ns}/${vmName}`) === undefined) {
    const spec0 = { ...vm.spec };
    delete spec0.virtualMachineIPAddressName;
    const blockDeviceRefs = vm.spec.blockDeviceRefs.map((r) => (r.kind === 'VirtualDisk' ? { ...r, name: newName.get(r.name) ?? r.name } : r));
    const copy: VirtualMachine = {
      apiVersion: API_VERSION,
      kind: 'VirtualMachine',
      metadata: { name: vmName, namespace: ns, labels: vm.metadata.labels, annotations: { ...vm.metadata.annotations, ...t.tag } },
      spec: { ...spec0, blockDeviceRefs },
    };
    await createIgnoringExisting(() => d.clients.vms.create(copy, { signal }));
  }
  const resources = planned.map((p) => {
    if (p.kind === 'VirtualMachine') return resource(p, 'Completed', `cloned from ${p.from}`);
    const ready = d.caches.disks.get(`${ns}/${p.to}`)?.status?.phase === 'Ready';
    return resource(p, ready ? 'Completed' : 'InProgress', `from the snapshot of ${p.from}`);
  });
  if (resources.some((r) => r.status !== 'Completed')) {
    return {
      state: 'waiting',
      reason: inProgressReason,
      message: 'waiting for the new disks to be Ready',
      resources,
      recheckMs: d.config.DEPENDENCY_RECHECK_INTERVAL,
    };
  }
  return { state: 'done', resources };
}

async function createIgnoringExisting(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err: unknown) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}
