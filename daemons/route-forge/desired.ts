/**
 * The desired state, a pure function of the VMs, the CiliumNodes, the VM CIDRs and the kernel's
 * route lookups of the node addresses: a rule and a blackhole per CIDR, a /32 per VM whose address
 * is in a CIDR and whose node can be reached, copying the kernel's route to that node (through the
 * local device when the node is this one).
 */
import { contains, formatIPv4, parseIPv4, parseSubnet, type Subnet } from '../../shared/api/ipv4.js';
import { KEEPS_ROUTE, routeKey, type DesiredState, type Lookup, type Route, type Skip, type VmAddress } from './model.js';

/** The metric of the blackhole routes, as in the original. */
export const BLACKHOLE_METRIC = 100;

export interface DesiredInput {
  readonly vms: Iterable<VmAddress>;
  /** CiliumNode name → its IPv4 CiliumInternalIP (undefined: the CiliumNode has none). */
  readonly nodes: ReadonlyMap<string, string | undefined>;
  readonly cidrs: readonly string[];
  /** The kernel's answer for each node address (`ip route get`), by address. */
  readonly lookups: ReadonlyMap<string, Lookup>;
  /** Local VMs go through this device (`cilium_host`). */
  readonly localDevice: string;
}

/**
 * Where a VM is, as far as the apiserver says: its node's address when its own address is in a CIDR
 * and its node has one, else why not. (Runs for every VM on every sync: no closure, no wrapper.)
 */
function place(vm: VmAddress, subnets: readonly Subnet[], nodes: ReadonlyMap<string, string | undefined>): string | Skip {
  if (vm.ip === undefined || vm.ip === '') return skipOf(vm, 'no-ip', 'status.ipAddress is empty');
  const ip = parseIPv4(vm.ip);
  if (ip === undefined) return skipOf(vm, 'invalid-ip', `status.ipAddress ${JSON.stringify(vm.ip)} is not an IPv4 address`);
  let inside = false;
  for (const subnet of subnets) if (contains(subnet, ip)) inside = true;
  if (!inside) return skipOf(vm, 'outside-cidrs', `${vm.ip} is in none of ${subnets.map((s) => s.text).join(', ') || 'the (empty) VM CIDRs'}`);
  if (vm.node === undefined || vm.node === '') return skipOf(vm, 'no-node', `status.nodeName is empty (address ${vm.ip})`);
  const nodeIP = nodes.get(vm.node);
  if (nodeIP !== undefined) return nodeIP;
  return nodes.has(vm.node)
    ? skipOf(vm, 'no-internal-ip', `CiliumNode ${vm.node} has no IPv4 CiliumInternalIP`)
    : skipOf(vm, 'no-cilium-node', `no CiliumNode ${vm.node}`);
}

function skipOf(vm: VmAddress, reason: Skip['reason'], detail: string): Skip {
  return { vm: vm.key, reason, detail, address: vm.ip };
}

function liveVms(vms: Iterable<VmAddress>): VmAddress[] {
  return [...vms].filter((vm) => !vm.deleting).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The CIDRs as subnets written the way the kernel prints them (`10.66.0.1/16` is `10.66.0.0/16`), once each. */
export function subnetsOf(cidrs: readonly string[]): Subnet[] {
  const seen = new Map<string, Subnet>();
  for (const text of cidrs) {
    const subnet = parseSubnet(text.trim());
    if (subnet === undefined) continue;
    const canonical = `${formatIPv4(subnet.first)}/${32 - Math.log2(subnet.last - subnet.first + 1)}`;
    if (!seen.has(canonical)) seen.set(canonical, { ...subnet, text: canonical });
  }
  return [...seen.values()];
}

/**
 * The part of the desired state that needs no kernel answer: which VMs can be routed (address in a
 * CIDR, a node with a CiliumInternalIP, first with that address) and which are skipped, and the node
 * addresses to look up. One pass over the VMs, in key order (so the first of two VMs with the same
 * address is always the same one).
 */
export interface Plan {
  readonly subnets: readonly Subnet[];
  readonly placed: ReadonlyArray<{ readonly vm: VmAddress; readonly ip: string; readonly nodeIP: string }>;
  readonly skipped: readonly Skip[];
  /** Each node address hosting a placed VM, once, sorted. */
  readonly nodeAddresses: readonly string[];
}

export function plan(input: Pick<DesiredInput, 'vms' | 'nodes' | 'cidrs'>): Plan {
  const subnets = subnetsOf(input.cidrs);
  const placed: Array<{ vm: VmAddress; ip: string; nodeIP: string }> = [];
  const skipped: Skip[] = [];
  const byAddress = new Map<string, string>();
  const addresses = new Set<string>();
  for (const vm of liveVms(input.vms)) {
    const nodeIP = place(vm, subnets, input.nodes);
    if (typeof nodeIP !== 'string') {
      skipped.push(nodeIP);
      continue;
    }
    const ip = vm.ip ?? '';
    const first = byAddress.get(ip);
    if (first !== undefined) {
      skipped.push({ vm: vm.key, reason: 'duplicate-ip', detail: `${ip} is already routed for ${first}` });
      continue;
    }
    byAddress.set(ip, vm.key);
    addresses.add(nodeIP);
    placed.push({ vm, ip, nodeIP });
  }
  return { subnets, placed, skipped, nodeAddresses: [...addresses].sort() };
}

/** Every CiliumNode's internal IP, once each, sorted: what a sync looks up (known before the plan). */
export function allNodeAddresses(nodes: ReadonlyMap<string, string | undefined>): string[] {
  const addresses = new Set<string>();
  for (const ip of nodes.values()) if (ip !== undefined) addresses.add(ip);
  return [...addresses].sort();
}

/** The node addresses whose routes the desired state needs (those hosting a VM that can be routed). */
export function nodeAddressesToLookUp(input: Pick<DesiredInput, 'vms' | 'nodes' | 'cidrs'>): string[] {
  return [...plan(input).nodeAddresses];
}

/** The route of one VM, copying the kernel's route to its node. */
export function vmRoute(ip: string, nodeIP: string, lookup: Extract<Lookup, { ok: true }>, localDevice: string): Route {
  const dst = `${ip}/32`;
  if (lookup.local) return { dst, type: 'unicast', dev: localDevice, prefsrc: lookup.prefsrc, metric: 0 };
  // A node on the same link has no gateway in its route: the node address itself is the next hop.
  return { dst, type: 'unicast', gateway: lookup.gateway ?? nodeIP, dev: lookup.dev, prefsrc: lookup.prefsrc, metric: 0 };
}

export function computeDesired(input: DesiredInput): DesiredState {
  return desiredFromPlan(plan(input), input.lookups, input.localDevice);
}

/** The desired state from a plan and the kernel's answers for its node addresses. */
export function desiredFromPlan(p: Plan, lookups: ReadonlyMap<string, Lookup>, localDevice: string): DesiredState {
  const routes = new Map<string, Route>();
  const owners = new Map<string, string>();
  const keep = new Set<string>();
  const skipped: Skip[] = [...p.skipped];
  for (const skip of p.skipped) if (KEEPS_ROUTE.has(skip.reason) && skip.address !== undefined) keep.add(`${skip.address}/32`);
  for (const subnet of p.subnets) {
    const route: Route = { dst: subnet.text, type: 'blackhole', metric: BLACKHOLE_METRIC };
    routes.set(routeKey(route), route);
    owners.set(routeKey(route), subnet.text);
  }
  for (const { vm, ip, nodeIP } of p.placed) {
    const lookup = lookups.get(nodeIP);
    if (lookup === undefined || !lookup.ok) {
      skipped.push({
        vm: vm.key,
        reason: 'node-unreachable',
        detail: `no route to node ${vm.node ?? ''} at ${nodeIP}: ${lookup?.ok === false ? lookup.error : 'not looked up'}`,
      });
      keep.add(`${ip}/32`);
      continue;
    }
    const route = vmRoute(ip, nodeIP, lookup, localDevice);
    routes.set(routeKey(route), route);
    owners.set(routeKey(route), vm.key);
  }
  return { cidrs: p.subnets.map((s) => s.text), routes, owners, keep, skipped };
}
