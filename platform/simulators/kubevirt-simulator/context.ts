import type { Logger } from '../../../shared/log/index.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import type { SimulatorClients } from './kube.js';
import type { GuestBackend } from './qemu/backend.js';
import type { VolumeLookup } from './virt-handler/firmware.js';

/** What the instance and migration steps share: clients, log, timing, and the way to come back later. */
export interface StepContext {
  readonly c: SimulatorClients;
  readonly log: Logger;
  readonly bootDelayMs: number;
  readonly migrationDelayMs: number;
  readonly unschedulableTimeoutMs: number;
  /** Where the guest firmware looks for something to boot. */
  readonly volumes: VolumeLookup;
  /** Real guests (QEMU processes) for the instances; undefined: guests are simulated. */
  readonly guests?: GuestBackend | undefined;
  /**
   * True once `delayMs` has passed since the first call with this `key`; until then false, and the
   * VM `vmKey` is synced again when the time is up.
   */
  elapsed(key: string, delayMs: number, vmKey: string): boolean;
  /** Forget a timing key (the step it measured is done). */
  forget(key: string): void;
}

export const ref = (namespace: string, name: string): { namespace: string; name: string } => ({ namespace, name });

/** RFC 3339 with seconds, as KubeVirt writes timestamps. */
export const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** The object, or undefined when it is gone. */
export async function find<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** Delete, and be content when it is already gone. */
export async function remove(del: () => Promise<void>): Promise<void> {
  try {
    await del();
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}

export interface Condition {
  type: string;
  status: string;
  reason?: string | undefined;
  message?: string | undefined;
  lastProbeTime?: string | null | undefined;
  lastTransitionTime?: string | null | undefined;
}

/**
 * A condition in the shape KubeVirt's Go types give it on the wire: both timestamps always present
 * (`null` when unset: `metav1.Time` is never omitted), reason and message only when set. virt-controller
 * patches an instance's conditions with a JSON Patch `test` of the whole list as it decoded them; a
 * condition missing `lastProbeTime` never equals its `"lastProbeTime": null`, so every such patch
 * would be refused (issue 31).
 */
export function goShaped(c: Condition): Condition {
  return {
    type: c.type,
    status: c.status,
    lastProbeTime: c.lastProbeTime ?? null,
    lastTransitionTime: c.lastTransitionTime ?? null,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  };
}

/**
 * `existing` with `set` put in (by type; a condition whose status did not change keeps its time), every
 * condition in KubeVirt's wire shape (`goShaped`). Status arrays are replaced whole by a merge patch,
 * so a writer keeps the others' conditions.
 */
export function withConditions(existing: readonly Condition[] | undefined, set: readonly Condition[]): Condition[] {
  const out = (existing ?? []).filter((c) => !set.some((s) => s.type === c.type)).map(goShaped);
  for (const s of set) {
    const before = existing?.find((c) => c.type === s.type);
    const same = before !== undefined && before.status === s.status;
    out.push(goShaped({ ...s, lastTransitionTime: same && before.lastTransitionTime != null ? before.lastTransitionTime : now() }));
  }
  return out;
}
