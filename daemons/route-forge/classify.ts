/**
 * Why each change of a sync is made, from what the previous sync left behind: `repair` when the
 * kernel lost or changed something that was in place and is still wanted (or gained something
 * nobody wants), `gc` for what the first sync removes (left over from before the start), `update`
 * when the desired state itself changed. Pure.
 */
import type { Cause } from './metrics.js';
import { routeKey, type Change, type DesiredState, type Route } from './model.js';
import { sameRoute } from './diff.js';

/** What the kernel held after the previous sync, as far as this process knows. */
export interface AfterSync {
  /** The desired state of that sync. */
  readonly desired: DesiredState;
  /** Routes of the table after it, by routeKey. */
  readonly routes: ReadonlyMap<string, Route>;
  /** Destinations of the rules of the table after it. */
  readonly rules: ReadonlySet<string>;
}

export function causeOf(change: Change, previous: AfterSync | undefined): Cause {
  if (previous === undefined) return change.op === 'route-delete' || change.op === 'rule-delete' ? 'gc' : 'update';
  switch (change.op) {
    case 'route-replace': {
      const before = previous.routes.get(routeKey(change.route));
      const wanted = previous.desired.routes.get(routeKey(change.route));
      return wanted !== undefined && sameRoute(wanted, change.route) && before !== undefined && sameRoute(before, change.route) ? 'repair' : 'update';
    }
    case 'route-delete':
      return previous.routes.has(routeKey(change.route)) ? 'update' : 'repair';
    case 'rule-add':
      return previous.desired.cidrs.includes(change.cidr) && previous.rules.has(change.cidr) ? 'repair' : 'update';
    case 'rule-delete':
      return change.rule.dst !== undefined && previous.rules.has(change.rule.dst) ? 'update' : 'repair';
  }
}

/** The table and rules after applying `changes` (minus the failed ones) to what was read. */
export function afterApplying(
  desired: DesiredState,
  read: { readonly routes: readonly Route[]; readonly ruleDsts: readonly string[] },
  changes: readonly Change[],
  failed: ReadonlySet<Change>,
): AfterSync {
  const routes = new Map(read.routes.map((r) => [routeKey(r), r]));
  const rules = new Set(read.ruleDsts);
  for (const change of changes) {
    if (failed.has(change)) continue;
    if (change.op === 'route-replace') routes.set(routeKey(change.route), change.route);
    else if (change.op === 'route-delete') routes.delete(routeKey(change.route));
    else if (change.op === 'rule-add') rules.add(change.cidr);
    else if (change.rule.dst !== undefined) rules.delete(change.rule.dst);
  }
  return { desired, routes, rules };
}
