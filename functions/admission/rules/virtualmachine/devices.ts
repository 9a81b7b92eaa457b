/** VirtualMachine USB devices (EE, DRA, USB/IP across nodes) and GPUs (feature gate). */
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { Findings } from '../../decision.js';
import type { RuleContext } from '../../lookups.js';
import type { Check } from '../check.js';

export const USB_MIN_KUBE_MINOR = 34;
export const USBIP_ANNOTATIONS = {
  total: 'usb.virtualization.deckhouse.io/usbip-total-ports',
  highSpeedUsed: 'usb.virtualization.deckhouse.io/usbip-high-speed-hub-used-ports',
  superSpeedUsed: 'usb.virtualization.deckhouse.io/usbip-super-speed-hub-used-ports',
} as const;

export const usbDevices: Check<VirtualMachine> = {
  name: 'USB devices are available to this VM',
  run: async (input, ctx, out) => {
    const devices = input.object.spec.usbDevices ?? [];
    if (devices.length === 0) return;
    if (!(await usbAvailable(ctx, out))) return;
    const names = devices.map((d) => d.name);
    names.forEach((n, i) => {
      if (names.indexOf(n) !== i) out.deny(`spec.usbDevices[${i}]`, `USB device ${n} is already listed at spec.usbDevices[${names.indexOf(n)}]`);
    });
    await usedElsewhere(input.object, input.namespace ?? '', ctx, out);
    const before = new Set((input.oldObject?.spec.usbDevices ?? []).map((d) => d.name));
    const added = names.map((n, i) => ({ n, i })).filter(({ n }) => !before.has(n));
    await Promise.all(added.map(({ n, i }) => reachable(input.object, input.namespace ?? '', n, i, ctx, out)));
  },
};

async function usbAvailable(ctx: RuleContext, out: Findings): Promise<boolean> {
  if (ctx.cluster.edition === 'CE') {
    out.deny('spec.usbDevices', 'USB devices are not available in the CE edition');
    return false;
  }
  const [dra, version] = await Promise.all([ctx.lookups.apiAvailable('resource.k8s.io', 'v1', 'resourceclaims'), ctx.lookups.serverVersion()]);
  const oldKube = version.major === 1 && version.minor < USB_MIN_KUBE_MINOR;
  if (!dra || oldKube) {
    out.deny('spec.usbDevices', `USB devices need Kubernetes 1.${USB_MIN_KUBE_MINOR} or newer with dynamic resource allocation (resource.k8s.io/v1)`);
    return false;
  }
  return true;
}

async function usedElsewhere(vm: VirtualMachine, namespace: string, ctx: RuleContext, out: Findings): Promise<void> {
  const others = (await ctx.lookups.virtualMachines(namespace)).filter((o) => o.metadata.name !== vm.metadata.name);
  (vm.spec.usbDevices ?? []).forEach((d, i) => {
    const holder = others.find((o) => (o.spec.usbDevices ?? []).some((u) => u.name === d.name));
    if (holder !== undefined) out.deny(`spec.usbDevices[${i}]`, `USB device ${d.name} is already used by VirtualMachine ${holder.metadata.name ?? ''}`);
  });
}

/** A device on another node than the running VM goes over USB/IP: its speed must be supported and a port free. */
async function reachable(vm: VirtualMachine, namespace: string, name: string, i: number, ctx: RuleContext, out: Findings): Promise<void> {
  const vmNode = vm.status?.nodeName;
  if (vmNode === undefined || vmNode === '') return;
  const device = await ctx.lookups.usbDevice(namespace, name);
  const deviceNode = device?.status?.nodeName ?? device?.status?.attributes?.nodeName;
  if (device === undefined || deviceNode === undefined || deviceNode === vmNode) return;
  const speed = device.status?.attributes?.speed ?? 0;
  const hub = speed === 480 ? 'highSpeedUsed' : speed >= 5000 ? 'superSpeedUsed' : undefined;
  if (hub === undefined) {
    out.deny(`spec.usbDevices[${i}]`, `USB device ${name} has speed ${speed} Mbit/s, which USB/IP does not support (480 or at least 5000)`);
    return;
  }
  const node = await ctx.lookups.node(vmNode);
  if (node === undefined) return;
  const capacity = Math.floor(Number(node.annotations[USBIP_ANNOTATIONS.total] ?? '0') / 2);
  const used = Number(node.annotations[USBIP_ANNOTATIONS[hub]] ?? '0');
  if (!(used + 1 <= capacity)) {
    out.deny(`spec.usbDevices[${i}]`, `node ${vmNode} has no free USB/IP port for USB device ${name} from node ${deviceNode}`);
  }
}

export const GPU_GATE = 'GPU';

export const gpus: Check<VirtualMachine> = {
  name: 'GPUs are enabled',
  run: async ({ object }, { lookups }, out) => {
    if ((object.spec.gpus ?? []).length === 0) return;
    const settings = await lookups.moduleSettings();
    if (!settings.featureGates.includes(GPU_GATE)) out.deny('spec.gpus', `GPUs need the ${GPU_GATE} feature gate in the virtualization ModuleConfig`);
  },
};
