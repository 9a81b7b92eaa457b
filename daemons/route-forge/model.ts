/**
 * The words of route-forge: what it reads from the apiserver (a VM's address and node, a node's
 * CiliumInternalIP), what it reads from the kernel (routes, rules, route lookups) and what it wants
 * there. Plain data, no I/O.
 */

/** One VirtualMachine as far as routing goes. */
export interface VmAddress {
  /** `namespace/name`. */
  readonly key: string;
  readonly ip?: string | undefined;
  readonly node?: string | undefined;
  /** deletionTimestamp is set: its route goes, like the original's. */
  readonly deleting: boolean;
}

/** A route of the dedicated table as the kernel reports it (`ip -json route show table T`), normalised. */
export interface Route {
  /** Always with its length: `10.66.0.5/32`, `10.66.0.0/16`. */
  readonly dst: string;
  /** `unicast` (the kernel omits it), `blackhole`, or whatever else the kernel says. */
  readonly type: string;
  readonly gateway?: string | undefined;
  readonly dev?: string | undefined;
  readonly prefsrc?: string | undefined;
  /** 0 when the kernel omits it. */
  readonly metric: number;
}

/** A policy rule (`ip -json rule show`), normalised; only the fields route-forge compares. */
export interface Rule {
  readonly priority: number;
  /** `10.66.0.0/16`; undefined for a rule without a destination selector. */
  readonly dst?: string | undefined;
  /** The table it looks up: a number as text (`1490`) or a name (`main`). */
  readonly table: string;
}

/** Where the kernel sends packets for a node's CiliumInternalIP (`ip -json route get`). */
export type Lookup =
  | {
      readonly ok: true;
      readonly local: boolean;
      readonly gateway?: string | undefined;
      readonly dev?: string | undefined;
      readonly prefsrc?: string | undefined;
    }
  | { readonly ok: false; readonly error: string };

/** Why a VM has no route of its own now. */
export type SkipReason = 'no-ip' | 'invalid-ip' | 'outside-cidrs' | 'no-node' | 'no-cilium-node' | 'no-internal-ip' | 'node-unreachable' | 'duplicate-ip';

export const SKIP_REASONS: readonly SkipReason[] = [
  'no-ip',
  'invalid-ip',
  'outside-cidrs',
  'no-node',
  'no-cilium-node',
  'no-internal-ip',
  'node-unreachable',
  'duplicate-ip',
];

/**
 * Reasons that leave an existing route in place: the VM is fine, what is missing is how to reach its
 * node (Cilium restarting, a node address changing), so the last route is the best guess. For the
 * others (no address, no node, deleted, an address outside the CIDRs) any route of the VM goes.
 */
export const KEEPS_ROUTE: ReadonlySet<SkipReason> = new Set<SkipReason>(['no-cilium-node', 'no-internal-ip', 'node-unreachable']);

export interface Skip {
  readonly vm: string;
  readonly reason: SkipReason;
  /** What was wrong, for the log line: the address, the node, the kernel's answer. */
  readonly detail: string;
  /** The VM's status.ipAddress, when it has one. */
  readonly address?: string | undefined;
}

/** Everything route-forge wants in the kernel, with who wants each route. */
export interface DesiredState {
  /** The VM CIDRs, each with a rule `to CIDR lookup T priority T` and a blackhole route. */
  readonly cidrs: readonly string[];
  /** By `routeKey`. */
  readonly routes: ReadonlyMap<string, Route>;
  /** The VM or CIDR behind each wanted route, by `routeKey`. */
  readonly owners: ReadonlyMap<string, string>;
  /** Destinations whose existing routes stay although nothing wants them now (see KEEPS_ROUTE). */
  readonly keep: ReadonlySet<string>;
  readonly skipped: readonly Skip[];
}

/** What the kernel holds that route-forge cares about. */
export interface KernelState {
  /** Every route of the dedicated table (IPv4). */
  readonly routes: readonly Route[];
  /** Every rule (all tables; the diff picks those of the dedicated table). */
  readonly rules: readonly Rule[];
}

/** Routes are identified like the kernel does within one table: destination and metric. */
export function routeKey(route: Pick<Route, 'dst' | 'metric'>): string {
  return route.metric === 0 ? route.dst : `${route.dst} metric ${route.metric}`;
}

/** One change to the kernel. */
export type Change =
  | { readonly op: 'route-replace'; readonly route: Route; readonly owner: string }
  | { readonly op: 'route-delete'; readonly route: Route }
  | { readonly op: 'rule-add'; readonly cidr: string }
  | { readonly op: 'rule-delete'; readonly rule: Rule };

/** `route` or `rule`, for metrics. */
export function objectOf(change: Change): 'route' | 'rule' {
  return change.op.startsWith('route') ? 'route' : 'rule';
}

/** A stable identity of what a change is about, to tell a repair from a first write. */
export function changeKey(change: Change): string {
  switch (change.op) {
    case 'route-replace':
    case 'route-delete':
      return `route ${routeKey(change.route)}`;
    case 'rule-add':
      return `rule ${change.cidr}`;
    case 'rule-delete':
      return `rule ${change.rule.dst ?? ''} priority ${change.rule.priority}`;
  }
}
