/** VirtualMachineIPAddress and VirtualMachineIPAddressLease validation. */
import {
  VirtualMachineIPAddressLeaseSchema,
  VirtualMachineIPAddressSchema,
  type VirtualMachineIPAddress,
  type VirtualMachineIPAddressLease,
} from '../../../shared/api/resources/addresses.js';
import { GROUP } from '../../../shared/api/resources/common.js';
import type { AdmissionInput, Findings } from '../decision.js';
import { ipToLeaseName, isUsableIn, leaseNameToIP, parseIPv4, parseSubnet, type Subnet } from '../../../shared/api/ipv4.js';
import type { RuleContext } from '../lookups.js';
import { onCreate, onUpdate, pure, type Check } from './check.js';
import { schemaParser, type Validator } from './validator.js';

type Vmip = VirtualMachineIPAddress;
const IP_PATH = 'spec.staticIP';

const typeAndAddress: Check<Vmip> = pure('staticIP matches the type', ({ object }, out) => {
  const ip = object.spec.staticIP ?? '';
  if (object.spec.type === 'Auto' && ip !== '') out.deny(IP_PATH, 'must be empty for type Auto');
  if (object.spec.type === 'Static' && ip === '') out.deny(IP_PATH, 'is required for type Static');
  else if (object.spec.type === 'Static' && parseIPv4(ip) === undefined) out.deny(IP_PATH, `${ip} is not a valid IPv4 address`);
});

async function subnets(ctx: RuleContext): Promise<Subnet[]> {
  const settings = await ctx.lookups.moduleSettings();
  return settings.virtualMachineCIDRs.map(parseSubnet).filter((s): s is Subnet => s !== undefined);
}

const inRangeAndFree: Check<Vmip> = {
  name: 'the static address is in virtualMachineCIDRs and not leased to another',
  run: async (input, ctx, out) => {
    const cidrs = await subnets(ctx);
    if (cidrs.length === 0) {
      out.deny('', 'VirtualMachineIPAddress needs virtualMachineCIDRs in the virtualization ModuleConfig');
      return;
    }
    const ip = input.object.spec.staticIP ?? '';
    const value = parseIPv4(ip);
    if (input.object.spec.type !== 'Static' || value === undefined || ip === (input.oldObject?.spec.staticIP ?? '')) return;
    if (!cidrs.some((s) => isUsableIn(s, value))) {
      const message = `${ip} is outside virtualMachineCIDRs (${cidrs.map((s) => s.text).join(', ')}) or is a network or broadcast address`;
      if (input.operation === 'CREATE') out.deny(IP_PATH, message);
      else out.warn(message, IP_PATH);
    }
    await notLeasedElsewhere(input, ip, ctx, out);
  },
};

async function notLeasedElsewhere(input: AdmissionInput<Vmip>, ip: string, ctx: RuleContext, out: Findings): Promise<void> {
  const lease = await ctx.lookups.ipAddressLease(ipToLeaseName(ip));
  const ref = lease?.spec.virtualMachineIPAddressRef;
  if (lease === undefined || ref === undefined) return;
  const ours = ref.namespace === input.namespace && ref.name === input.object.metadata.name;
  const released = lease.status?.phase === 'Released' || ref.name === '';
  if (ours || released) return;
  out.deny(IP_PATH, `${ip} is already leased by VirtualMachineIPAddress ${ref.namespace}/${ref.name}`);
}

const changes = onUpdate<Vmip>('type and address change only from Auto to Static with the same address', ({ object }, old, _ctx, out) => {
  const typeChanged = object.spec.type !== old.spec.type;
  const ipChanged = (object.spec.staticIP ?? '') !== (old.spec.staticIP ?? '');
  if (!typeChanged && !ipChanged) return;
  const assigned = old.status?.address ?? '';
  if (typeChanged) {
    const autoToStatic = old.spec.type === 'Auto' && object.spec.type === 'Static' && assigned !== '' && object.spec.staticIP === assigned;
    if (!autoToStatic) {
      const hint = assigned === '' ? 'once an address is assigned' : `with staticIP ${assigned}`;
      out.deny('spec.type', `can change only from Auto to Static, ${hint}`);
    }
    return;
  }
  if (old.status?.phase === 'Bound' || old.status?.phase === 'Attached') out.deny(IP_PATH, 'is immutable while the address is bound');
});

export const vmipValidator: Validator<Vmip> = {
  group: GROUP,
  kind: 'VirtualMachineIPAddress',
  parse: schemaParser(VirtualMachineIPAddressSchema),
  checks: [typeAndAddress, inRangeAndFree, changes],
};

const leaseName: Check<VirtualMachineIPAddressLease> = onCreate(
  pure('the name encodes an IP address', ({ object }, out) => {
    const name = object.metadata.name ?? '';
    if (leaseNameToIP(name) === undefined) out.deny('metadata.name', `${name} does not encode an IPv4 address; expected ip-a-b-c-d, e.g. ip-10-66-0-5`);
  }),
);

export const vmipLeaseValidator: Validator<VirtualMachineIPAddressLease> = {
  group: GROUP,
  kind: 'VirtualMachineIPAddressLease',
  parse: schemaParser(VirtualMachineIPAddressLeaseSchema),
  checks: [leaseName],
};
