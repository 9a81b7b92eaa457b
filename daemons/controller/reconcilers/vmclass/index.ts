import { VMClassCondition } from '../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { VirtualMachineClass } from '../../../../shared/api/resources/virtualmachineclass.js';
import type { Deps } from '../../deps.js';
import { conditionOn, findCondition, removeCondition } from '../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerContext, type HandlerOutcome, type ReconcileState } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { protectionHandler } from '../protection.js';
import { VMIndex } from '../vm/state.js';
import { commonCpuFeatures, maxAllocatable, nodeFits } from './nodes.js';

type Status = NonNullable<VirtualMachineClass['status']>;
type State = ReconcileState<VirtualMachineClass, Status>;

const C = VMClassCondition;

/** Keeps `vm-cleanup` (as the original does on classes); deletion waits while VMs use the class (InUse). */
function deletion(deps: Deps): Handler<State> {
  const protection = protectionHandler({
    name: 'deletion',
    finalizer: Finalizer.vmCleanup,
    client: deps.clients.classes,
    cache: deps.caches.classes,
    heldBy: (s: State) => findCondition(s.status.conditions, C.InUse.type)?.status === 'True',
  });
  return {
    name: 'deletion',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const cls = s.obj;
      const users = inUse(deps, cls.metadata.name ?? '');
      if (users) {
        // A stable message: a count would rewrite the status with every VM added or removed.
        conditionOn(s, ctx, {
          type: C.InUse.type,
          status: 'True',
          reason: C.InUse.reason.VirtualMachineClassInUse,
          message: 'the class is used by virtual machines',
        });
      } else {
        s.status.conditions = removeCondition(s.status.conditions, C.InUse.type);
      }
      if (cls.metadata.deletionTimestamp !== undefined) s.status.phase = 'Terminating';
      return protection.handle(s, ctx);
    },
  };
}

/** Whether a live VM uses the class (a deleting class has few users: only then are they read one by one). */
function inUse(deps: Deps, name: string): boolean {
  const count = deps.caches.vms.countByIndex(VMIndex.byClass, name);
  if (count === 0) return false;
  if (count > 16) return true;
  return deps.caches.vms.byIndex(VMIndex.byClass, name).some((vm) => vm.metadata.deletionTimestamp === undefined);
}

/** Available nodes (selector, tolerations), CPU features (Discovery, Features), phase and Ready. */
function discovery(deps: Deps): Handler<State> {
  return {
    name: 'discovery',
    handle(s, ctx): void {
      const { spec } = s.obj;
      let nodes = deps.caches.nodes.list().filter((n) => nodeFits(n, spec.nodeSelector, spec.tolerations ?? []));
      if (spec.cpu.type === 'Features') {
        const wanted = spec.cpu.features ?? [];
        nodes = nodes.filter((n) => wanted.every((f) => commonCpuFeatures([n]).includes(f)));
        s.status.cpuFeatures = { enabled: [...wanted] };
      }
      if (spec.cpu.type === 'Discovery') {
        const enabled = commonCpuFeatures(nodes);
        s.status.cpuFeatures = { enabled };
        const ok = nodes.length > 0;
        conditionOn(
          s,
          ctx,
          ok
            ? { type: C.Discovered.type, status: 'True', reason: C.Discovered.reason.DiscoverySucceeded }
            : { type: C.Discovered.type, status: 'False', reason: C.Discovered.reason.DiscoveryFailed, message: 'no nodes to discover CPU features on' },
        );
      } else {
        conditionOn(s, ctx, {
          type: C.Discovered.type,
          status: 'False',
          reason: C.Discovered.reason.DiscoverySkip,
          message: `CPU type ${spec.cpu.type} needs no discovery`,
        });
      }
      s.status.availableNodes = nodes.map((n) => n.metadata.name ?? '').sort();
      const max = maxAllocatable(nodes);
      if (max !== undefined) s.status.maxAllocatableResources = max;
      else delete s.status.maxAllocatableResources;
      lifecycle(s, ctx);
    },
  };
}

function lifecycle(s: State, ctx: HandlerContext): void {
  if (s.obj.metadata.deletionTimestamp === undefined) s.status.phase = 'Pending';
  if (s.obj.metadata.generation !== undefined) s.status.observedGeneration = s.obj.metadata.generation;
  if ((s.status.availableNodes ?? []).length === 0) {
    conditionOn(s, ctx, {
      type: C.Ready.type,
      status: 'False',
      reason: C.Ready.reason.NoSuitableNodesFound,
      message: 'no node matches the nodeSelector and tolerations of the class',
    });
    return;
  }
  if (s.obj.spec.cpu.type === 'Discovery' && (s.status.cpuFeatures?.enabled ?? []).length === 0) {
    conditionOn(s, ctx, {
      type: C.Ready.type,
      status: 'False',
      reason: C.Ready.reason.NoCpuFeaturesEnabled,
      message: 'the selected nodes share no CPU features',
    });
    return;
  }
  conditionOn(s, ctx, { type: C.Ready.type, status: 'True', reason: C.Ready.reason.SuitableNodesFound });
  if (s.obj.metadata.deletionTimestamp === undefined) s.status.phase = 'Ready';
}

export function vmClassReconciler(deps: Deps): ReconcileFn {
  return handlerChain<VirtualMachineClass, Status, State>({
    name: 'vmclass',
    load: (key) => deps.caches.classes.get(key),
    invalid: (key) => deps.caches.classes.invalid(key),
    init: (cls) => ({ obj: cls, status: clone(cls.status) ?? { phase: 'Pending' } }),
    handlers: [deletion(deps), discovery(deps)],
    statusOf: (cls) => cls.status,
    writeStatus: async (cls, patch, signal) => {
      deps.caches.classes.remember(await deps.clients.classes.patchStatus({ name: cls.metadata.name ?? '' }, patch, { signal }));
    },
  });
}
