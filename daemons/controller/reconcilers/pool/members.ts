/**
 * The pure part of the pool reconciler: member names, the VM a member is made from, which disk of a
 * member belongs to which disk template, scale-down victims and the pool's status. No I/O here.
 */
import { randomInt } from 'node:crypto';
import { poolSelector, templateHash } from '../../../../shared/api/pool-members.js';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { POOL_LABELS, type VirtualMachinePool } from '../../../../shared/api/resources/vmpool.js';
import type { OwnerReference } from '../../../../shared/kube/index.js';
import type { ConditionInput } from '../../engine/conditions.js';

export type DiskTemplate = VirtualMachinePool['spec']['virtualDiskTemplates'][number];
type BlockDeviceRef = VirtualMachine['spec']['blockDeviceRefs'][number];

/** The apiserver's generateName alphabet (no vowels, no look-alikes). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function randomSuffix(length: number, pick: (n: number) => number = randomInt): string {
  return Array.from({ length }, () => SUFFIX_ALPHABET[pick(SUFFIX_ALPHABET.length)]).join('');
}

/** A member's name: `<pool>-<5 random>`, as the original's generateName `<pool>-` gives (admission keeps pool names ≤ 57). */
export const memberName = (pool: string, suffix: string): string => `${pool}-${suffix}`;

/** A Delete-policy disk: `<member>-<template>`, owned by the member and collected with it. */
export const deleteDiskName = (member: string, template: string): string => `${member}-${template}`;

/** A Retain-policy disk: `<pool>-<template>-<6 random>`, owned by the pool and reused by later members. */
export const retainDiskName = (pool: string, template: string, suffix: string): string => `${pool}-${template}-${suffix}`;

export const isRetain = (t: DiskTemplate): boolean => t.reclaim?.onScaleDown === 'Retain';

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `diskName` is the member's disk of template `t` (by the naming rules above). */
export function isDiskOfTemplate(pool: string, member: string, t: DiskTemplate, diskName: string): boolean {
  if (isRetain(t)) return new RegExp(`^${escapeRe(`${pool}-${t.name}-`)}[${SUFFIX_ALPHABET}]{6}$`).test(diskName);
  return diskName === deleteDiskName(member, t.name);
}

/** The disk templates by name. */
export function templatesByName(pool: VirtualMachinePool): Map<string, DiskTemplate> {
  return new Map(pool.spec.virtualDiskTemplates.map((t) => [t.name, t]));
}

/**
 * The member's blockDeviceRefs: the template's, each disk-template placeholder (kind VirtualDisk,
 * name of a template) resolved to this member's disk: the one it already has, else `pickDisk`'s.
 * Images stay as written: every member shares them.
 */
export function resolveRefs(
  pool: VirtualMachinePool,
  member: string,
  current: readonly BlockDeviceRef[],
  pickDisk: (t: DiskTemplate) => string,
): BlockDeviceRef[] {
  const byName = templatesByName(pool);
  const poolName = pool.metadata.name ?? '';
  return pool.spec.virtualMachineTemplate.spec.blockDeviceRefs.map((ref) => {
    const t = ref.kind === 'VirtualDisk' ? byName.get(ref.name) : undefined;
    if (t === undefined) return { ...ref };
    const have = current.find((r) => r.kind === 'VirtualDisk' && isDiskOfTemplate(poolName, member, t, r.name));
    return { ...ref, name: have?.name ?? pickDisk(t) };
  });
}

export function controllerRefTo(pool: VirtualMachinePool): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachinePool',
    name: pool.metadata.name ?? '',
    uid: pool.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The managed labels of every member and pool-made disk. */
export function memberLabels(pool: VirtualMachinePool): Record<string, string> {
  return { [POOL_LABELS.poolUID]: pool.metadata.uid ?? '', [POOL_LABELS.pool]: pool.metadata.name ?? '' };
}

/** A new member VM: the template's metadata and spec, the managed labels, the revision it is made on. */
export function newMember(pool: VirtualMachinePool, name: string, refs: BlockDeviceRef[]): VirtualMachine {
  const tmpl = pool.spec.virtualMachineTemplate;
  const hash = templateHash(pool);
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachine',
    metadata: {
      name,
      namespace: pool.metadata.namespace,
      labels: { ...tmpl.metadata?.labels, ...memberLabels(pool), [POOL_LABELS.templateHash]: hash },
      annotations: { ...tmpl.metadata?.annotations, [POOL_LABELS.patchedTemplateHash]: hash },
      ownerReferences: [{ ...controllerRefTo(pool) }],
    },
    spec: { ...structuredClone(tmpl.spec), blockDeviceRefs: refs } as VirtualMachine['spec'],
  };
}

/** A disk made from a template: Delete ones owned by the member, Retain ones by the pool. */
export function newDisk(pool: VirtualMachinePool, t: DiskTemplate, name: string, owner: OwnerReference): VirtualDisk {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualDisk',
    metadata: {
      name,
      namespace: pool.metadata.namespace,
      labels: { ...memberLabels(pool), [POOL_LABELS.diskTemplate]: t.name },
      ownerReferences: [{ ...owner }],
    },
    spec: structuredClone(t.spec),
  };
}

const created = (vm: VirtualMachine): number => Date.parse(vm.metadata.creationTimestamp ?? '') || 0;

/**
 * Which members an anonymous scale-down removes: NewestFirst the youngest, OldestFirst the oldest
 * (ties by name); Explicit none (only scaleDownWith or a delete by the user removes members).
 */
export function pickVictims(policy: VirtualMachinePool['spec']['scaleDownPolicy'], candidates: readonly VirtualMachine[], n: number): VirtualMachine[] {
  if (n <= 0 || policy === 'Explicit') return [];
  const sign = policy === 'OldestFirst' ? 1 : -1;
  const sorted = [...candidates].sort((a, b) => sign * (created(a) - created(b)) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  return sorted.slice(0, n);
}

/** Whether the member's last template patch waits for a restart to apply. */
export function awaitingRestart(vm: VirtualMachine): boolean {
  return (vm.status?.restartAwaitingChanges ?? []).length > 0;
}

type Status = NonNullable<VirtualMachinePool['status']>;

/** A replica that could not be made whole this pass (its disk or itself), with the apiserver's reason. */
export interface ReplicaProblem {
  readonly replica: string;
  readonly message: string;
}

/** The counts and conditions of the status from the observed members. */
export function poolStatus(
  pool: VirtualMachinePool,
  members: readonly VirtualMachine[],
  problems: readonly ReplicaProblem[],
): { fields: Omit<Status, 'conditions'>; conditions: ConditionInput[] } {
  const hash = templateHash(pool);
  const live = members.filter((m) => m.metadata.deletionTimestamp === undefined);
  const ready = live.filter((m) => m.status?.phase === 'Running').length;
  const updated = live.filter((m) => m.metadata.labels?.[POOL_LABELS.templateHash] === hash).length;
  const restartPending = live.filter((m) => m.metadata.annotations?.[POOL_LABELS.patchedTemplateHash] === hash && awaitingRestart(m)).length;
  const desired = pool.spec.replicas ?? 0;
  const fields = {
    replicas: members.length,
    readyReplicas: ready,
    updatedReplicas: updated,
    restartPendingReplicas: restartPending,
    desiredTemplateHash: hash,
    selector: poolSelector(pool.metadata.uid ?? ''),
    ...(pool.metadata.generation === undefined ? {} : { observedGeneration: pool.metadata.generation }),
  };
  const available: ConditionInput =
    ready >= desired
      ? { type: 'Available', status: 'True', reason: 'AllReplicasReady', message: `All ${desired} replicas are ready.` }
      : { type: 'Available', status: 'False', reason: 'InsufficientReadyReplicas', message: `Only ${ready} of ${desired} replicas are ready.` };
  const trouble = problems.map((p) => `replica ${p.replica}: ${p.message}`).join('; ');
  const progressing: ConditionInput =
    members.length !== desired || problems.length > 0
      ? {
          type: 'Progressing',
          status: 'True',
          reason: 'ReplicasProgressing',
          message: [`Converging to ${desired} replicas (currently ${members.length}).`, trouble].filter(Boolean).join(' '),
        }
      : { type: 'Progressing', status: 'False', reason: 'PoolStable', message: 'No replica changes in progress.' };
  let synced: ConditionInput = { type: 'Synced', status: 'True', reason: 'PoolSynced', message: 'All replicas are on the current virtualMachineTemplate.' };
  if (updated < live.length) {
    synced =
      restartPending > 0
        ? {
            type: 'Synced',
            status: 'False',
            reason: 'RestartPendingApproval',
            message: `${restartPending} of ${live.length} replicas await a restart to apply configuration.`,
          }
        : {
            type: 'Synced',
            status: 'False',
            reason: 'RolloutInProgress',
            message: `${updated} of ${live.length} replicas are on the current virtualMachineTemplate.`,
          };
  }
  return { fields, conditions: [available, progressing, synced] };
}
