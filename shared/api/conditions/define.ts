/** Condition types and their reasons as typed constants (`VMCondition.Running.reason.PodNotStarted`). */

export interface ConditionSet<T extends string, R extends string> {
  readonly type: T;
  readonly reason: { readonly [K in R]: K };
}

/** A condition type and the reasons it may carry. */
export function condition<const T extends string, const R extends readonly string[]>(type: T, ...reasons: R): ConditionSet<T, R[number]> {
  const reason = Object.fromEntries(reasons.map((r) => [r, r])) as { [K in R[number]]: K };
  return Object.freeze({ type, reason: Object.freeze(reason) });
}
