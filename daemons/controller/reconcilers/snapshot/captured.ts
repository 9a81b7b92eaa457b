/**
 * What a Ready VirtualMachineSnapshot holds, read back for Restore and Clone: the VM and its disks as
 * captured (the snapshot's Secret) and, per disk, the VirtualDiskSnapshot taken of it; and a disk
 * recreated from such a snapshot.
 */
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineSnapshot } from '../../../../shared/api/resources/snapshots.js';
import { NotFoundError } from '../../../../shared/errors/index.js';
import type { SnapshotDeps } from './deps.js';
import { SnapshotSecretKey } from './vmsnapshot/reconciler.js';

export interface Captured {
  vm: Pick<VirtualMachine, 'apiVersion' | 'kind' | 'metadata' | 'spec'>;
  disks: { disk: Pick<VirtualDisk, 'apiVersion' | 'kind' | 'metadata' | 'spec'>; snapshot: string }[];
}

export type CapturedResult = { ok: true; captured: Captured } | { ok: false; waiting: boolean; message: string };

/** The snapshot, Ready, with its Secret and a disk snapshot for every captured disk. */
export async function readCaptured(d: SnapshotDeps, namespace: string, name: string, signal: AbortSignal): Promise<CapturedResult> {
  const vms: VirtualMachineSnapshot | undefined = d.snapshots.caches.vmSnapshots.get(`${namespace}/${name}`);
  if (vms === undefined) return { ok: false, waiting: false, message: `VirtualMachineSnapshot ${name} does not exist` };
  const phase = vms.status?.phase;
  if (phase === 'Failed' || vms.metadata.deletionTimestamp !== undefined) {
    return { ok: false, waiting: false, message: `VirtualMachineSnapshot ${name} is ${phase === 'Failed' ? 'Failed' : 'being deleted'}` };
  }
  if (phase !== 'Ready') return { ok: false, waiting: true, message: `waiting for VirtualMachineSnapshot ${name} to be Ready (phase ${phase ?? 'unset'})` };
  const secretName = vms.status?.virtualMachineSnapshotSecretName ?? '';
  let data: Record<string, string> | undefined;
  try {
    data = (await d.clients.secrets.get({ namespace, name: secretName }, { signal })).data;
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  const decode = (key: string): unknown => {
    const raw = data?.[key];
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  };
  const vm = decode(SnapshotSecretKey.vm) as Captured['vm'] | undefined;
  const disks = decode(SnapshotSecretKey.disks) as Captured['disks'][number]['disk'][] | undefined;
  if (vm?.spec === undefined || !Array.isArray(disks)) {
    return { ok: false, waiting: false, message: `the Secret ${secretName} of VirtualMachineSnapshot ${name} is missing or does not hold a captured VM` };
  }
  const byDisk = new Map<string, string>();
  for (const vdsName of vms.status?.virtualDiskSnapshotNames ?? []) {
    const vds = d.snapshots.caches.vdSnapshots.get(`${namespace}/${vdsName}`);
    if (vds?.status?.phase === 'Ready') byDisk.set(vds.spec.virtualDiskName, vdsName);
  }
  const out: Captured['disks'] = [];
  for (const disk of disks) {
    const snapshot = byDisk.get(disk.metadata.name ?? '');
    if (snapshot === undefined)
      return { ok: false, waiting: false, message: `no Ready VirtualDiskSnapshot of VirtualDisk ${disk.metadata.name ?? ''} in ${name}` };
    out.push({ disk, snapshot });
  }
  return { ok: true, captured: { vm, disks: out } };
}

/**
 * A disk named `name` with the captured disk's labels, annotations and size, filled from `snapshot`
 * (a VirtualDiskSnapshot) and tagged with `tag` (annotation → value) so a later pass recognises it.
 */
export function diskFromSnapshot(captured: Captured['disks'][number], name: string, namespace: string, tag: Record<string, string>): VirtualDisk {
  const { disk, snapshot } = captured;
  const pvc = disk.spec.persistentVolumeClaim;
  return {
    apiVersion: disk.apiVersion,
    kind: 'VirtualDisk',
    metadata: { name, namespace, labels: disk.metadata.labels, annotations: { ...disk.metadata.annotations, ...tag } },
    spec: {
      ...disk.spec,
      dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualDiskSnapshot', name: snapshot } },
      ...(pvc !== undefined ? { persistentVolumeClaim: pvc } : {}),
    },
  };
}
