/**
 * The changes that take the kernel from what it holds to what is desired, in a safe order: routes
 * first (so a new rule never sends traffic to a table that lacks them), then the rule additions,
 * then the removals. The dedicated table belongs to route-forge: anything in it that nothing wants
 * goes (garbage collection), except destinations the desired state keeps. Rules that look up the
 * table with a destination not among the CIDRs go too; rules without a destination are left alone
 * (as in the original).
 */
import { routeKey, type Change, type DesiredState, type KernelState, type Route, type Rule } from './model.js';

export function sameRoute(a: Route, b: Route): boolean {
  return a.dst === b.dst && a.type === b.type && a.metric === b.metric && a.gateway === b.gateway && a.dev === b.dev && a.prefsrc === b.prefsrc;
}

export function diffRoutes(desired: DesiredState, actual: readonly Route[]): { replace: Change[]; remove: Change[] } {
  const actualByKey = new Map<string, Route>();
  for (const route of actual) if (!actualByKey.has(routeKey(route))) actualByKey.set(routeKey(route), route);
  const replace: Change[] = [];
  for (const [key, route] of desired.routes) {
    const current = actualByKey.get(key);
    if (current === undefined || !sameRoute(current, route)) replace.push({ op: 'route-replace', route, owner: desired.owners.get(key) ?? '' });
  }
  const remove: Change[] = [];
  for (const [key, route] of actualByKey) {
    if (!desired.routes.has(key) && !desired.keep.has(route.dst)) remove.push({ op: 'route-delete', route });
  }
  return { replace, remove };
}

export function diffRules(desired: DesiredState, actual: readonly Rule[], table: number): { add: Change[]; remove: Change[] } {
  const ours = actual.filter((r) => r.table === String(table) && r.dst !== undefined);
  const matched = new Set<Rule>();
  const add: Change[] = [];
  for (const cidr of desired.cidrs) {
    const found = ours.find((r) => !matched.has(r) && r.dst === cidr && r.priority === table);
    if (found === undefined) add.push({ op: 'rule-add', cidr });
    else matched.add(found);
  }
  const remove: Change[] = ours.filter((r) => !matched.has(r)).map((rule) => ({ op: 'rule-delete', rule }));
  return { add, remove };
}

/** Every change, in the order they must be applied. */
export function diff(desired: DesiredState, actual: KernelState, table: number): Change[] {
  const routes = diffRoutes(desired, actual.routes);
  const rules = diffRules(desired, actual.rules, table);
  return [...routes.replace, ...rules.add, ...rules.remove, ...routes.remove];
}
