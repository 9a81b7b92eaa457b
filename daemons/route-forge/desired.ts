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

type Placement = { readonly ok: true; readonly ip: string; readonly nodeIP: string } | { readonly ok: false; readonly skip: Skip };

/** Where a VM is, as far as the apiserver says: its address in a CIDR and its node's address. */
function place(vm: VmAddress, subnets: readonly Subnet[], nodes: ReadonlyMap<string, string | undefined>): Placement {
  const skip = (reason: Skip['reason'], detail: string): Placement => ({ ok: false, skip: { vm: vm.key, reason, detail } });
  if (vm.ip === undefined || vm.ip === '') return skip('no-ip', 'status.ipAddress is empty');
  const ip = parseIPv4(vm.ip);
  if (ip === undefined) return skip('invalid-ip', `status.ipAddress ${JSON.stringify(vm.ip)} is not an IPv4 address`);
  if (!subnets.some((s) => contains(s, ip))) return skip('outside-cidrs', `${vm.ip} is in none of ${subnets.map((s) => s.text).join(', ') || 'the (empty) VM CIDRs'}`);
  if (vm.node === undefined || vm.node === '') return skip('no-node', `status.nodeName is empty (address ${vm.ip})`);
  if (!nodes.has(vm.node)) return skip('no-cilium-node', `no CiliumNode ${vm.node}`);
  const nodeIP = nodes.get(vm.node);
  if (nodeIP === undefined) return skip('no-internal-ip', `CiliumNode ${vm.node} has no IPv4 CiliumInternalIP`);
  return { ok: true, ip: vm.ip, nodeIP };
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

/** The node addresses whose routes the desired state needs (those hosting a VM that can be routed). */
export function nodeAddressesToLookUp(input: Pick<DesiredInput, 'vms' | 'nodes' | 'cidrs'>): string[] {
  const subnets = subnetsOf(input.cidrs);
  const addresses = new Set<string>();
  for (const vm of liveVms(input.vms)) {
    const placed = place(vm, subnets, input.nodes);
    if (placed.ok) addresses.add(placed.nodeIP);
  }
  return [...addresses].sort();
}

/** The route of one VM, copying the kernel's route to its node. */
export function vmRoute(ip: string, nodeIP: string, lookup: Extract<Lookup, { ok: true }>, localDevice: string): Route {
  const dst = `${ip}/32`;
  if (lookup.local) return { dst, type: 'unicast', dev: localDevice, prefsrc: lookup.prefsrc, metric: 0 };
  // A node on the same link has no gateway in its route: the node address itself is the next hop.
  return { dst, type: 'unicast', gateway: lookup.gateway ?? nodeIP, dev: lookup.dev, prefsrc: lookup.prefsrc, metric: 0 };
}

export function computeDesired(input: DesiredInput): DesiredState {
  const subnets = subnetsOf(input.cidrs);
  const routes = new Map<string, Route>();
  const owners = new Map<string, string>();
  const keep = new Set<string>();
  const skipped: Skip[] = [];
  for (const subnet of subnets) {
    const route: Route = { dst: subnet.text, type: 'blackhole', metric: BLACKHOLE_METRIC };
    routes.set(routeKey(route), route);
    owners.set(routeKey(route), subnet.text);
  }
  const byAddress = new Map<string, string>();
  for (const vm of liveVms(input.vms)) {
    const placed = place(vm, subnets, input.nodes);
    if (!placed.ok) {
      skipped.push(placed.skip);
      if (KEEPS_ROUTE.has(placed.skip.reason) && vm.ip !== undefined) keep.add(`${vm.ip}/32`);
      continue;
    }
    const first = byAddress.get(placed.ip);
    if (first !== undefined) {
      skipped.push({ vm: vm.key, reason: 'duplicate-ip', detail: `${placed.ip} is already routed for ${first}` });
      continue;
    }
    byAddress.set(placed.ip, vm.key);
    const lookup = input.lookups.get(placed.nodeIP);
    if (lookup === undefined || !lookup.ok) {
      skipped.push({ vm: vm.key, reason: 'node-unreachable', detail: `no route to node ${vm.node ?? ''} at ${placed.nodeIP}: ${lookup?.ok === false ? lookup.error : 'not looked up'}` });
      keep.add(`${placed.ip}/32`);
      continue;
    }
    const route = vmRoute(placed.ip, placed.nodeIP, lookup, input.localDevice);
    routes.set(routeKey(route), route);
    owners.set(routeKey(route), vm.key);
  }
  return { cidrs: subnets.map((s) => s.text), routes, owners, keep, skipped };
}
