import type { Condition } from '../../../shared/api/k8s/core.js';

/** A condition as handlers state it; the time and generation are filled in by setCondition. */
export interface ConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message?: string;
}

/**
 * Set a condition in a list (returned as a new list). lastTransitionTime moves only when the status
 * changes, so restating an unchanged condition changes nothing and the status write is skipped.
 */
export function setCondition(list: readonly Condition[] | undefined, input: ConditionInput, now: Date, observedGeneration?: number): Condition[] {
  const current = list ?? [];
  const old = current.find((c) => c.type === input.type);
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: truncate(input.message ?? ''),
    lastTransitionTime: old !== undefined && old.status === input.status ? old.lastTransitionTime : rfc3339(now),
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
  if (old === undefined) return [...current, next];
  return current.map((c) => (c.type === input.type ? next : c));
}

/** The list without the condition of this type. */
export function removeCondition(list: readonly Condition[] | undefined, type: string): Condition[] | undefined {
  if (list === undefined) return undefined;
  const out = list.filter((c) => c.type !== type);
  return out.length === 0 ? undefined : out;
}

export function findCondition(list: readonly Condition[] | undefined, type: string): Condition | undefined {
  return list?.find((c) => c.type === type);
}

export function isTrue(list: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(list, type)?.status === 'True';
}

/** metav1.Time: RFC 3339 with whole seconds. */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

const MAX_MESSAGE = 32_768;

function truncate(message: string): string {
  return message.length <= MAX_MESSAGE ? message : `${message.slice(0, MAX_MESSAGE - 3)}...`;
}

/** A handler state whose status carries conditions. */
interface WithConditions {
  readonly obj: { metadata: { generation?: number | undefined } };
  status: { conditions?: Condition[] | undefined };
}

/** Set a condition on a handler state's status copy, stamped with the pass's time and the object's generation. */
export function conditionOn(s: WithConditions, ctx: { readonly now: Date }, input: ConditionInput): void {
  s.status.conditions = setCondition(s.status.conditions, input, ctx.now, s.obj.metadata.generation);
}
