/** VirtualMachine networks and the main IP address (IPAM needs virtualMachineCIDRs in the ModuleConfig). */
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { Findings } from '../../decision.js';
import { SDN_GROUP, SDN_VERSION, type RuleContext } from '../../lookups.js';
import type { Check } from '../check.js';

export const MAX_NETWORK_ID = 16383;

type Network = NonNullable<VirtualMachine['spec']['networks']>[number];
const netKey = (n: Network): string => (n.type === 'Main' ? 'Main' : `${n.type}/${n.name ?? ''}`);

/** The networks a VM uses: none listed means the Main network only. */
export function usesMainNetwork(vm: VirtualMachine): boolean {
  const networks = vm.spec.networks;
  return networks === undefined || networks.length === 0 || networks.some((n) => n.type === 'Main');
}

export const networkShape: Check<VirtualMachine> = {
  name: 'networks are well formed',
  run: ({ object }, _ctx, out) => {
    const networks = object.spec.networks ?? [];
    const seen = new Map<string, number>();
    const ids = new Map<number, number>();
    networks.forEach((n, i) => {
      const at = `spec.networks[${i}]`;
      if (n.type === 'Main' && i > 0) out.deny(at, 'the Main network must be the first');
      if (n.type === 'Main' && n.name !== undefined && n.name !== '') out.deny(`${at}.name`, 'must be empty for the Main network');
      if (n.type !== 'Main' && (n.name === undefined || n.name === '')) out.deny(`${at}.name`, `is required for type ${n.type}`);
      const first = seen.get(netKey(n));
      if (first === undefined) seen.set(netKey(n), i);
      else out.deny(at, `${netKey(n)} is already listed at spec.networks[${first}]`);
      if (n.id === undefined) return;
      if (n.type === 'Main' && n.id !== 1) out.deny(`${at}.id`, 'must be 1 for the Main network');
      if (n.id < 1 || n.id > MAX_NETWORK_ID) out.deny(`${at}.id`, `must be from 1 to ${MAX_NETWORK_ID}`);
      const other = ids.get(n.id);
      if (other === undefined) ids.set(n.id, i);
      else out.deny(`${at}.id`, `id ${n.id} is already used by spec.networks[${other}]`);
    });
  },
};

export const networkIdsStable: Check<VirtualMachine> = {
  name: 'network ids change only while the VM is stopped',
  run: ({ object, oldObject }, _ctx, out) => {
    if (oldObject === undefined || oldObject.status?.phase === 'Stopped') return;
    const before = new Map((oldObject.spec.networks ?? []).map((n) => [netKey(n), n.id]));
    (object.spec.networks ?? []).forEach((n, i) => {
      const old = before.get(netKey(n));
      if (old !== undefined && n.id !== undefined && n.id !== old) {
        out.deny(`spec.networks[${i}].id`, `cannot change from ${old} to ${n.id} unless the VM is Stopped`);
      }
    });
  },
};

export const networksAvailable: Check<VirtualMachine> = {
  name: 'the networks exist and are available',
  run: async ({ object, namespace }, ctx, out) => {
    const settings = await ctx.lookups.moduleSettings();
    const networks = object.spec.networks ?? [];
    if (settings.virtualMachineCIDRs.length === 0) {
      if (networks.length === 0) out.deny('spec.networks', 'is required: the module has no virtualMachineCIDRs, so the Main network is unavailable');
      networks.forEach((n, i) => {
        if (n.type === 'Main') out.deny(`spec.networks[${i}]`, 'the Main network is unavailable: the module has no virtualMachineCIDRs');
      });
    }
    const additional = networks.map((n, i) => ({ n, i })).filter(({ n }) => n.type !== 'Main' && n.name);
    if (additional.length === 0) return;
    if (!(await sdnAvailable(ctx))) {
      out.deny('spec.networks', 'additional networks need the SDN module, which is not enabled');
      return;
    }
    await Promise.all(additional.map(({ n, i }) => networkExists(n, i, namespace ?? '', ctx, out)));
  },
};

async function sdnAvailable(ctx: RuleContext): Promise<boolean> {
  return ctx.lookups.apiAvailable(SDN_GROUP, SDN_VERSION, 'networks');
}

async function networkExists(n: Network, i: number, namespace: string, ctx: RuleContext, out: Findings): Promise<void> {
  const kind = n.type === 'ClusterNetwork' ? 'ClusterNetwork' : 'Network';
  if (await ctx.lookups.networkExists(kind, namespace, n.name ?? '')) return;
  out.deny(`spec.networks[${i}].name`, `${kind} ${n.name ?? ''} does not exist`);
}

export const ipAddressName: Check<VirtualMachine> = {
  name: 'the IP address name fits the networks and settings',
  run: async ({ object, namespace, operation }, { lookups }, out) => {
    const name = object.spec.virtualMachineIPAddressName ?? '';
    if (name !== '') {
      const settings = await lookups.moduleSettings();
      if (settings.virtualMachineCIDRs.length === 0) {
        out.deny('spec.virtualMachineIPAddressName', 'must be empty: the module has no virtualMachineCIDRs');
      } else if (!usesMainNetwork(object)) {
        out.deny('spec.virtualMachineIPAddressName', 'must be empty: the VM has no Main network');
      }
      return;
    }
    if (operation !== 'CREATE') return;
    const vmName = object.metadata.name ?? '';
    const existing = await lookups.virtualMachineIPAddress(namespace ?? '', vmName);
    if (existing !== undefined) {
      out.deny(
        'spec.virtualMachineIPAddressName',
        `a VirtualMachineIPAddress named ${vmName} already exists: set spec.virtualMachineIPAddressName to ${vmName} to use it`,
      );
    }
  },
};
