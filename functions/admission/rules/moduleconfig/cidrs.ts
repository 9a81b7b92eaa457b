/** virtualMachineCIDRs: no overlaps with each other or the cluster's networks; leased subnets stay. */
import type { Findings } from '../../decision.js';
import { contains, leaseNameToIP, overlaps, parseIPv4, parseSubnet, type Subnet } from '../../../../shared/api/ipv4.js';
import type { RuleContext } from '../../lookups.js';
import type { Check } from '../check.js';
import { cidrsOf, type ModuleConfig } from './view.js';

const PATH = 'spec.settings.virtualMachineCIDRs';

function subnetsOf(mc: ModuleConfig | undefined): Array<{ subnet: Subnet; i: number }> {
  return cidrsOf(mc)
    .map((text, i) => ({ subnet: parseSubnet(text), i }))
    .filter((s): s is { subnet: Subnet; i: number } => s.subnet !== undefined);
}

export const cidrOverlaps: Check<ModuleConfig> = {
  name: 'virtualMachineCIDRs do not overlap each other or cluster networks',
  run: async ({ object }, ctx, out) => {
    const subnets = subnetsOf(object);
    if (subnets.length === 0) return;
    subnets.forEach(({ subnet, i }, n) => {
      const other = subnets.slice(0, n).find((s) => overlaps(s.subnet, subnet));
      if (other !== undefined) out.deny(`${PATH}[${i}]`, `${subnet.text} overlaps ${other.subnet.text}`);
    });
    clusterOverlaps(subnets, 'the pod subnet', ctx.cluster.podSubnetCIDRs, out);
    clusterOverlaps(subnets, 'the service subnet', ctx.cluster.serviceSubnetCIDRs, out);
    await nodeOverlaps(subnets, ctx, out);
  },
};

function clusterOverlaps(subnets: Array<{ subnet: Subnet; i: number }>, what: string, cidrs: readonly string[], out: Findings): void {
  for (const text of cidrs) {
    const cluster = parseSubnet(text);
    if (cluster === undefined) continue;
    for (const { subnet, i } of subnets) {
      if (overlaps(subnet, cluster)) out.deny(`${PATH}[${i}]`, `${subnet.text} overlaps ${what} ${cluster.text}`);
    }
  }
}

async function nodeOverlaps(subnets: Array<{ subnet: Subnet; i: number }>, ctx: RuleContext, out: Findings): Promise<void> {
  for (const node of await ctx.lookups.nodes()) {
    for (const address of node.addresses) {
      const ip = parseIPv4(address);
      if (ip === undefined) continue;
      for (const { subnet, i } of subnets) {
        if (contains(subnet, ip)) out.deny(`${PATH}[${i}]`, `${subnet.text} contains ${address}, an address of node ${node.name}`);
      }
    }
  }
}

export const leasedCidrsStay: Check<ModuleConfig> = {
  name: 'subnets with leased addresses are kept',
  run: async ({ object, oldObject }, { lookups }, out) => {
    if (oldObject === undefined) return;
    const before = cidrsOf(oldObject);
    const now = new Set(cidrsOf(object));
    if (before.length > 0 && now.size === 0) {
      out.deny(PATH, 'cannot be cleared once set');
      return;
    }
    const removed = before
      .filter((c) => !now.has(c))
      .map(parseSubnet)
      .filter((s): s is Subnet => s !== undefined);
    if (removed.length === 0) return;
    const leases = await lookups.ipAddressLeases();
    for (const subnet of removed) {
      const held = leases.filter((l) => {
        const ip = parseIPv4(leaseNameToIP(l.metadata.name ?? '') ?? '');
        return ip !== undefined && contains(subnet, ip);
      });
      if (held.length === 0) continue;
      const names = held
        .slice(0, 3)
        .map((l) => l.metadata.name ?? '')
        .join(', ');
      out.deny(PATH, `cannot remove ${subnet.text}: ${held.length} address lease(s) still use it (${names}${held.length > 3 ? ', ...' : ''})`);
    }
  },
};
