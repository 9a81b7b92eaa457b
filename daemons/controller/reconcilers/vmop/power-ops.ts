import { NotFoundError } from '../../../../shared/errors/index.js';
import { conditionalMergePatch } from '../../../../shared/kube/index.js';
import { ignoreMissing } from '../vm/handlers/deletion.js';
import { RESTART_REQUESTED, START_REQUESTED } from '../vm/handlers/power-decision.js';
import type { OpContext, Operation, Progress } from './operation.js';

const refOf = (c: Pick<OpContext, 'vm'>): { namespace: string | undefined; name: string } => ({
  namespace: c.vm.metadata.namespace,
  name: c.vm.metadata.name ?? '',
});

/**
 * Set (value) or remove (null) one annotation on the internal VM, on condition that it is the version
 * this pass looked at (the VM reconciler writes the internal VM too): a conflict requeues the pass.
 */
async function annotate(c: Pick<OpContext, 'deps' | 'kvvm' | 'signal'>, key: string, value: string | null): Promise<boolean> {
  const kvvm = c.kvvm;
  if (kvvm === undefined) return true;
  if (value === null && kvvm.metadata.annotations?.[key] === undefined) return true;
  const ref = { namespace: kvvm.metadata.namespace, name: kvvm.metadata.name ?? '' };
  const patch = conditionalMergePatch({ metadata: { annotations: { [key]: value } } }, kvvm.metadata.resourceVersion);
  try {
    c.deps.caches.kvvms.remember(await c.deps.clients.kvvms.mergePatch(ref, patch, { signal: c.signal }));
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError) || value !== null) throw err;
  }
  return true;
}

/** A forced stop gives the guest no grace period (on the instance this pass looked at). */
async function dropGracePeriod(c: OpContext): Promise<void> {
  if (c.vmop.spec.force !== true || c.kvvmi === undefined) return;
  const patch = conditionalMergePatch({ spec: { terminationGracePeriodSeconds: 0 } }, c.kvvmi.metadata.resourceVersion);
  await ignoreMissing(c.deps.clients.kvvmis.mergePatch(refOf(c), patch, { signal: c.signal }));
}

const running = (c: OpContext): boolean => c.kvvmi?.status?.phase === 'Running' && c.kvvmi.metadata.deletionTimestamp === undefined;

/** Start: asks the VM controller for a start (annotation); done when an instance runs. */
export const startOperation: Operation = {
  inProgressReason: 'StartInProgress',
  async signal(c) {
    if (c.kvvm === undefined) return 'the internal VM does not exist yet';
    await annotate(c, START_REQUESTED, c.vmop.metadata.uid ?? '');
    return undefined;
  },
  check: (c): Progress => (running(c) ? { state: 'done' } : { state: 'waiting', reason: 'StartInProgress' }),
  cleanup: (c) => annotate(c, START_REQUESTED, null),
};

/** Stop: keeps KubeVirt from starting it again (runStrategy Manual), deletes the instance; done when none is left. */
export const stopOperation: Operation = {
  inProgressReason: 'StopInProgress',
  async signal(c) {
    if (c.kvvm !== undefined && c.kvvm.spec.runStrategy !== 'Manual') {
      const patch = conditionalMergePatch({ spec: { runStrategy: 'Manual' } }, c.kvvm.metadata.resourceVersion);
      c.deps.caches.kvvms.remember(await c.deps.clients.kvvms.mergePatch(refOf(c), patch, { signal: c.signal }));
    }
    await dropGracePeriod(c);
    if (c.kvvmi !== undefined) await ignoreMissing(c.deps.clients.kvvmis.delete(refOf(c), { signal: c.signal }));
    return undefined;
  },
  check: (c): Progress => (c.kvvmi === undefined ? { state: 'done' } : { state: 'waiting', reason: 'StopInProgress' }),
  cleanup: () => Promise.resolve(true),
};

/** Restart: asks the VM controller to restart this instance (annotation with its uid); done when a new one runs. */
export const restartOperation: Operation = {
  inProgressReason: 'RestartInProgress',
  async signal(c) {
    const uid = c.kvvmi?.metadata.uid;
    if (c.kvvm === undefined || uid === undefined) return 'the virtual machine has no instance to restart yet';
    await dropGracePeriod(c);
    await annotate(c, RESTART_REQUESTED, uid);
    return undefined;
  },
  check(c): Progress {
    const old = c.kvvm?.metadata.annotations?.[RESTART_REQUESTED];
    if (running(c) && c.kvvmi?.metadata.uid !== old) return { state: 'done' };
    return { state: 'waiting', reason: 'RestartInProgress' };
  },
  cleanup: (c) => annotate(c, RESTART_REQUESTED, null),
};
