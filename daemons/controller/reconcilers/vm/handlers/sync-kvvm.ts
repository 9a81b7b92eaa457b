import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { InternalVirtualMachine } from '../../../../../shared/api/internal/resources.js';
import { conditionalMergePatch } from '../../../../../shared/kube/index.js';
import type { Deps } from '../../../deps.js';
import { deepEqual, mergeDiff } from '../../../engine/merge-diff.js';
import type { Handler, HandlerContext, HandlerOutcome } from '../../../engine/reconciler.js';
import { pendingChanges, type PendingChange } from '../changes.js';
import { LAST_APPLIED_CLASS_SPEC, LAST_APPLIED_SPEC, buildInternalVM } from '../kvvm/build.js';
import { withHotpluggedVolumes } from '../kvvm/hotplugged.js';
import { withKubeVirtDefaults } from '../kvvm/kubevirt-defaults.js';
import { propagatedKeys, withPropagatedFrom, withoutPropagated, type PropagatedKeys } from '../kvvm/propagation.js';
import { runStrategyFor, type RunPolicy } from '../power.js';
import { fingerprint, isRefusal, RefusalBackoff, refusalMessage } from '../refusal.js';
import { condition, dropCondition, type VMState } from '../state.js';

const Applied = VMCondition.ConfigurationApplied;
const Awaiting = VMCondition.AwaitingRestartToApplyConfiguration;
const KubeVirt = VMCondition.KubeVirtReady;

/**
 * Creates the internal VM once every dependency is ready, and keeps it equal to what the VM spec and
 * class say. A change to a running instance's template waits for a restart (listed in
 * status.restartAwaitingChanges), unless restartApprovalMode is Automatic: then it is applied and the
 * VM restarted. A stopped VM, or one about to (re)start, gets every change at once.
 * An internal VM that virt-api or the apiserver refuses is not sent again until `refusals` allows
 * (exponential per VM, the same object only); meanwhile the VM says why (KubeVirtReady=False).
 */
export function syncKvvmHandler(
  deps: Deps,
  refusals = new RefusalBackoff({ baseMs: deps.config.KUBEVIRT_REFUSAL_BACKOFF, maxMs: deps.config.KUBEVIRT_REFUSAL_BACKOFF_MAX }),
): Handler<VMState> {
  return {
    name: 'syncKvvm',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      if (s.waitingFor.length > 0 || s.vmClass === undefined || s.devices === undefined) return;
      const kvvm = s.kvvm;
      const applied = parseSpec(kvvm?.metadata.annotations?.[LAST_APPLIED_SPEC]);
      const runStrategy = runStrategyFor({
        runPolicy: s.obj.spec.runPolicy,
        kvvmExists: kvvm !== undefined,
        currentRunStrategy: kvvm?.spec.runStrategy,
        vmiExists: s.kvvmi !== undefined,
        previousRunPolicy: applied?.['runPolicy'] as RunPolicy | undefined,
      });
      const built = buildInternalVM({ vm: s.obj, vmClass: s.vmClass, devices: s.devices, ipAddress: s.ipAddress, runStrategy, macs: s.macs });
      const desired = withHotpluggedVolumes(withKubeVirtDefaults(built, kvvm), kvvm);
      const print = fingerprint(desired);
      const waiting = refusals.waiting(s.key, print);
      if (waiting !== undefined) {
        markRefused(s, ctx, waiting.message);
        return { requeueAfterMs: waiting.waitMs };
      }
      try {
        await sync(deps, s, ctx, desired, runStrategy, applied);
      } catch (err: unknown) {
        if (!isRefusal(err)) throw err;
        const message = refusalMessage(err);
        const waitMs = refusals.refused(s.key, print, message);
        ctx.log.warn({ err, retryInMs: waitMs, refusals: refusals.refusals(s.key) }, 'the internal VM was refused');
        markRefused(s, ctx, message);
        return { requeueAfterMs: waitMs };
      }
      refusals.forget(s.key);
      if (s.status.conditions?.some((c) => c.type === KubeVirt.type && c.reason === KubeVirt.reason.InternalVirtualMachineRefused)) {
        dropCondition(s, KubeVirt.type);
      }
    },
  };
}

/** Create the internal VM, or bring it to `desired` (or only its runStrategy, while changes wait for a restart). */
async function sync(
  deps: Deps,
  s: VMState,
  ctx: HandlerContext,
  desired: InternalVirtualMachine,
  runStrategy: InternalVirtualMachine['spec']['runStrategy'],
  applied: Record<string, unknown> | undefined,
): Promise<void> {
  const kvvm = s.kvvm;
  if (kvvm === undefined) {
    s.kvvm = deps.caches.kvvms.remember(await deps.clients.kvvms.create(desired, { signal: ctx.signal }));
    s.startPending ||= runStrategy === 'Always';
    ctx.log.info({ runStrategy }, 'created the internal VM');
    return markApplied(s, ctx);
  }
  // The VM's labels and annotations are applied at once, to the template too: KubeVirt does not restart for them.
  const keys = propagatedKeys(s.obj, kvvm.metadata.annotations);
  if (templateNeedsRestart(kvvm, desired, keys) && instanceLive(s) && s.power.kind === 'none') {
    const changes = describeChanges(applied, s, kvvm);
    if (s.obj.spec.disruptions.restartApprovalMode !== 'Automatic') {
      await patchKvvm(deps, s, kvvm, liveOnly(kvvm, desired, runStrategy, keys), ctx, keys);
      return markAwaiting(s, ctx, changes);
    }
    s.power = { kind: 'restart', why: 'apply changes (restartApprovalMode Automatic)' };
    ctx.log.info({ changes: changes.length }, 'applying changes with a restart');
  }
  await patchKvvm(deps, s, kvvm, desired, ctx, keys);
  markApplied(s, ctx);
}

/**
 * Whether the template differs in more than the VM's propagated labels and annotations and its volumes'
 * claims: a claim changed alone is a disk's storage-class migration (or its revert), which KubeVirt
 * applies to the running instance (volume migration), so it never waits for a restart.
 */
function templateNeedsRestart(kvvm: InternalVirtualMachine, desired: InternalVirtualMachine, keys: PropagatedKeys): boolean {
  const own = (t: InternalVirtualMachine['spec']['template']): unknown => ({
    ...t,
    metadata: withoutPropagated(t.metadata, keys),
    spec: { ...t.spec, volumes: t.spec.volumes?.map(withoutClaimName) },
  });
  return !deepEqual(own(kvvm.spec.template), own(desired.spec.template));
}

type Volume = NonNullable<InternalVirtualMachine['spec']['template']['spec']['volumes']>[number];
const withoutClaimName = (v: Volume): Volume =>
  v.persistentVolumeClaim === undefined ? v : { ...v, persistentVolumeClaim: { ...v.persistentVolumeClaim, claimName: '' } };

/** What may change while the instance runs: the runStrategy and the propagated metadata, on the VM and its template. */
function liveOnly(
  kvvm: InternalVirtualMachine,
  desired: InternalVirtualMachine,
  runStrategy: InternalVirtualMachine['spec']['runStrategy'],
  keys: PropagatedKeys,
): InternalVirtualMachine {
  const template = kvvm.spec.template;
  return {
    ...kvvm,
    metadata: withPropagatedFrom(kvvm.metadata, desired.metadata, keys),
    spec: { ...kvvm.spec, runStrategy, template: { ...template, metadata: withPropagatedFrom(template.metadata, desired.spec.template.metadata, keys) } },
  };
}

function markRefused(s: VMState, ctx: HandlerContext, message: string): void {
  condition(s, ctx, { type: KubeVirt.type, status: 'False', reason: KubeVirt.reason.InternalVirtualMachineRefused, message });
}

/** An instance that runs (or is starting) the template it was created from. */
function instanceLive(s: VMState): boolean {
  const vmi = s.kvvmi;
  if (vmi === undefined || vmi.metadata.deletionTimestamp !== undefined) return false;
  const phase = vmi.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

/**
 * Patch our parts of the internal VM (spec, our annotations and labels, the VM's propagated ones) to `target`, if they differ,
 * on condition that it is still the version the patch was computed from (operations write it too).
 */
async function patchKvvm(
  deps: Deps,
  s: VMState,
  current: InternalVirtualMachine,
  target: InternalVirtualMachine,
  ctx: HandlerContext,
  keys: PropagatedKeys,
): Promise<void> {
  const ours = (o: InternalVirtualMachine): unknown => ({
    metadata: {
      labels: o.metadata.labels,
      annotations: {
        ...Object.fromEntries([...keys.annotations].map((k) => [k, o.metadata.annotations?.[k]])),
        [LAST_APPLIED_SPEC]: o.metadata.annotations?.[LAST_APPLIED_SPEC],
        [LAST_APPLIED_CLASS_SPEC]: o.metadata.annotations?.[LAST_APPLIED_CLASS_SPEC],
      },
    },
    spec: o.spec,
  });
  const patch = mergeDiff(ours(current), ours(target)) as object | undefined;
  if (patch === undefined) return;
  const ref = { namespace: current.metadata.namespace, name: current.metadata.name ?? '' };
  const conditional = conditionalMergePatch(patch, current.metadata.resourceVersion);
  s.kvvm = deps.caches.kvvms.remember(await deps.clients.kvvms.mergePatch(ref, conditional, { signal: ctx.signal }));
  ctx.log.debug('updated the internal VM');
}

function describeChanges(applied: Record<string, unknown> | undefined, s: VMState, kvvm: InternalVirtualMachine): PendingChange[] {
  const changes = applied === undefined ? [] : pendingChanges(applied, s.obj.spec);
  if (changes.length > 0) return changes;
  const classSpec = parseSpec(kvvm.metadata.annotations?.[LAST_APPLIED_CLASS_SPEC]);
  const className = s.obj.spec.virtualMachineClassName;
  if (!deepEqual(classSpec, s.vmClass?.spec))
    return [{ operation: 'replace', path: 'virtualMachineClassName', currentValue: className, desiredValue: className }];
  return [{ operation: 'replace', path: 'blockDeviceRefs', currentValue: applied?.['blockDeviceRefs'], desiredValue: s.obj.spec.blockDeviceRefs }];
}

function markApplied(s: VMState, ctx: HandlerContext): void {
  condition(s, ctx, { type: Applied.type, status: 'True', reason: Applied.reason.ConfigurationApplied });
  dropCondition(s, Awaiting.type);
  delete s.status.restartAwaitingChanges;
}

function markAwaiting(s: VMState, ctx: HandlerContext, changes: PendingChange[]): void {
  const message = `${changes.length} change(s) wait for a restart: ${changes.map((c) => c.path).join(', ')}`;
  condition(s, ctx, { type: Applied.type, status: 'False', reason: Applied.reason.ConfigurationNotApplied, message });
  condition(s, ctx, { type: Awaiting.type, status: 'True', reason: Awaiting.reason.ChangesPendingRestart, message });
  s.status.restartAwaitingChanges = changes.map((c) => ({ ...c }));
}

function parseSpec(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
