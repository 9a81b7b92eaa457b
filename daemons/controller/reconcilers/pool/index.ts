/**
 * VirtualMachinePool: keeps spec.replicas member VMs made from the template (handlers `sync` →
 * `disks` → `template` → `status`), each with its own disks from the disk templates.
 */
import { isPoolMember, templateHash } from '../../../../shared/api/pool-members.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { POOL_LABELS, type VirtualMachinePool } from '../../../../shared/api/resources/vmpool.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../../../shared/errors/index.js';
import { objectKey, ownerReferenceTo } from '../../../../shared/kube/index.js';
import type { Deps } from '../../deps.js';
import { conditionOn } from '../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerOutcome, type ReconcileState } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { collectFreeDisks, poolDisks } from './disks.js';
import {
  awaitingRestart,
  controllerRefTo,
  deleteDiskName,
  isDiskOfTemplate,
  isRetain,
  memberLabels,
  memberName,
  newDisk,
  newMember,
  pickVictims,
  poolStatus,
  randomSuffix,
  resolveRefs,
  retainDiskName,
  type DiskTemplate,
  type ReplicaProblem,
} from './members.js';
import { BY_POOL_UID, type PoolDeps } from './parts.js';

type Status = NonNullable<VirtualMachinePool['status']>;

interface State extends ReconcileState<VirtualMachinePool, Status> {
  /** The pool's members (controller reference), kept current as this pass creates and deletes. */
  members: VirtualMachine[];
  /** Disks handed to a member in this pass (the cache may not show the reference yet). */
  readonly assigned: Set<string>;
  readonly problems: ReplicaProblem[];
}

const live = (s: State): VirtualMachine[] => s.members.filter((m) => m.metadata.deletionTimestamp === undefined);
const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A disk name for template `t` of a new or changed member: Delete `<member>-<t>`, Retain a free pool disk or a new one. */
function diskPicker(deps: Deps, s: State, member: string): (t: DiskTemplate) => string {
  const pool = s.obj;
  return (t) => {
    if (!isRetain(t)) return deleteDiskName(member, t.name);
    const free = collectFreeDisks(deps, pool, t, live(s), s.assigned).find((d) => d.status?.phase === 'Ready');
    const name = free?.metadata.name ?? retainDiskName(pool.metadata.name ?? '', t.name, randomSuffix(6));
    s.assigned.add(name);
    return name;
  };
}

/** Member count = spec.replicas: new members from the template; surplus ones removed by scaleDownPolicy. */
function sync(deps: Deps): Handler<State> {
  return {
    name: 'sync',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const pool = s.obj;
      if (pool.metadata.deletionTimestamp !== undefined) return { stop: true }; // members go with it (ownerReferences)
      const desired = pool.spec.replicas ?? 0;
      const opts = { signal: ctx.signal };
      for (let i = s.members.length; i < desired; i++) {
        const name = memberName(pool.metadata.name ?? '', randomSuffix(5));
        if (deps.caches.vms.get(objectKey({ namespace: pool.metadata.namespace, name })) !== undefined) continue; // taken: next pass
        try {
          const vm = deps.caches.vms.remember(
            await deps.clients.vms.create(newMember(pool, name, resolveRefs(pool, name, [], diskPicker(deps, s, name))), opts),
          );
          s.members.push(vm);
          ctx.log.info({ vm: name }, 'created pool member');
        } catch (err: unknown) {
          if (err instanceof AlreadyExistsError) continue;
          s.problems.push({ replica: name, message: `VirtualMachine could not be created: ${errorText(err)}` });
        }
      }
      const candidates = live(s);
      const surplus = s.members.length - desired - (s.members.length - candidates.length);
      for (const victim of pickVictims(pool.spec.scaleDownPolicy, candidates, surplus)) {
        try {
          await deps.clients.vms.delete(
            { namespace: victim.metadata.namespace, name: victim.metadata.name ?? '' },
            { ...opts, preconditions: { uid: victim.metadata.uid ?? '' } },
          );
          ctx.log.info({ vm: victim.metadata.name }, 'deleted pool member on scale-down');
        } catch (err: unknown) {
          if (!(err instanceof NotFoundError) && !(err instanceof ConflictError)) throw err;
        }
        s.members = s.members.filter((m) => m !== victim);
      }
    },
  };
}

/** Every live member has each template's disk (Delete: owned by the member; Retain: by the pool). */
function disks(deps: Deps): Handler<State> {
  return {
    name: 'disks',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const pool = s.obj;
      const poolName = pool.metadata.name ?? '';
      for (const member of live(s)) {
        const memberName = member.metadata.name ?? '';
        for (const t of pool.spec.virtualDiskTemplates) {
          const ref = member.spec.blockDeviceRefs.find((r) => r.kind === 'VirtualDisk' && isDiskOfTemplate(poolName, memberName, t, r.name));
          if (ref === undefined) continue; // a template added later: the template handler gives it one
          const existing = deps.caches.disks.get(objectKey({ namespace: pool.metadata.namespace, name: ref.name }));
          if (existing !== undefined) {
            if (existing.metadata.labels?.[POOL_LABELS.poolUID] !== pool.metadata.uid) {
              s.problems.push({ replica: memberName, message: `VirtualDisk ${ref.name} exists and was not made by this pool` });
            }
            continue;
          }
          const owner = isRetain(t) ? controllerRefTo(pool) : ownerReferenceTo(member, { controller: true, blockOwnerDeletion: true });
          try {
            deps.caches.disks.remember(await deps.clients.disks.create(newDisk(pool, t, ref.name, owner), { signal: ctx.signal }));
            ctx.log.info({ vm: memberName, disk: ref.name }, 'created pool member disk');
          } catch (err: unknown) {
            if (err instanceof AlreadyExistsError) continue;
            s.problems.push({ replica: memberName, message: `VirtualDisk ${ref.name} (template ${t.name}) could not be created: ${errorText(err)}` });
          }
        }
      }
      return poolDisks(deps, s.obj, live(s), s.assigned, ctx);
    },
  };
}

/** Members on an older template get its spec (their own disks kept); the revision label follows once nothing awaits a restart. */
function template(deps: Deps): Handler<State> {
  return {
    name: 'template',
    async handle(s, ctx): Promise<void> {
      const pool = s.obj;
      const hash = templateHash(pool);
      const tmpl = pool.spec.virtualMachineTemplate;
      for (const member of live(s)) {
        const ref = { namespace: member.metadata.namespace, name: member.metadata.name ?? '' };
        const rv = member.metadata.resourceVersion ?? '';
        const labels = member.metadata.labels ?? {};
        const annotations = member.metadata.annotations ?? {};
        try {
          if (annotations[POOL_LABELS.patchedTemplateHash] !== hash) {
            const refs = resolveRefs(pool, ref.name, member.spec.blockDeviceRefs, diskPicker(deps, s, ref.name));
            const updated = await deps.clients.vms.jsonPatch(
              ref,
              [
                { op: 'test', path: '/metadata/resourceVersion', value: rv },
                { op: 'replace', path: '/spec', value: { ...structuredClone(tmpl.spec), blockDeviceRefs: refs } },
                { op: 'add', path: '/metadata/labels', value: { ...labels, ...tmpl.metadata?.labels, ...memberLabels(pool) } },
                { op: 'add', path: '/metadata/annotations', value: { ...annotations, ...tmpl.metadata?.annotations, [POOL_LABELS.patchedTemplateHash]: hash } },
              ],
              { signal: ctx.signal },
            );
            s.members = s.members.map((m) => (m === member ? deps.caches.vms.remember(updated) : m));
            ctx.log.info({ vm: ref.name, hash }, 'patched pool member to the current template');
          } else if (
            labels[POOL_LABELS.templateHash] !== hash &&
            member.status?.observedGeneration === member.metadata.generation &&
            !awaitingRestart(member)
          ) {
            const updated = await deps.clients.vms.jsonPatch(
              ref,
              [
                { op: 'test', path: '/metadata/resourceVersion', value: rv },
                { op: 'add', path: '/metadata/labels', value: { ...labels, [POOL_LABELS.templateHash]: hash } },
              ],
              { signal: ctx.signal },
            );
            s.members = s.members.map((m) => (m === member ? deps.caches.vms.remember(updated) : m));
          }
        } catch (err: unknown) {
          if (!(err instanceof ConflictError) && !(err instanceof NotFoundError))
            s.problems.push({ replica: ref.name, message: `template not applied: ${errorText(err)}` });
        }
      }
    },
  };
}

/** The counts and conditions; a replica that could not be made whole is tried again after DEPENDENCY_RECHECK_INTERVAL. */
function status(deps: Deps): Handler<State> {
  return {
    name: 'status',
    handle(s, ctx): HandlerOutcome | void {
      const { fields, conditions } = poolStatus(s.obj, s.members, s.problems);
      s.status = { ...s.status, ...fields };
      for (const c of conditions) conditionOn(s, ctx, c);
      if (s.problems.length > 0) return { requeueAfterMs: deps.config.DEPENDENCY_RECHECK_INTERVAL };
    },
  };
}

export function poolReconciler(deps: Deps, pool: PoolDeps): ReconcileFn {
  return handlerChain<VirtualMachinePool, Status, State>({
    name: 'vmpool',
    load: (key) => pool.pools.get(key),
    invalid: (key) => pool.pools.invalid(key),
    init: (p) => ({
      obj: p,
      status: clone(p.status) ?? {},
      members: deps.caches.vms.byIndex(BY_POOL_UID, p.metadata.uid ?? '').filter((vm) => isPoolMember(vm, p.metadata.uid ?? '')),
      assigned: new Set(),
      problems: [],
    }),
    handlers: [sync(deps), disks(deps), template(deps), status(deps)],
    statusOf: (p) => p.status,
    writeStatus: async (p, patch, signal) => {
      pool.pools.remember(await pool.poolClient.patchStatus({ namespace: p.metadata.namespace, name: p.metadata.name ?? '' }, patch, { signal }));
    },
  });
}
