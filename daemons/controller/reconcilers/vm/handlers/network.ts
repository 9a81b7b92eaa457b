/**
 * `NetworkReady`, as the original writes it: absent while the VM has only the main network; with
 * additional networks False `SDNModuleDisabled` unless the SDN module is enabled (SDN_ENABLED), else
 * read from the `network.deckhouse.io/networks-status` annotation the SDN module puts on each
 * virt-launcher pod: every interface condition that is not True is named, per pod and interface.
 */
import { z } from 'zod';
import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { Deps } from '../../../deps.js';
import type { Pod } from '../../../kube/resources.js';
import type { Handler } from '../../../engine/reconciler.js';
import { condition, dropCondition, podsOfVM, type VMState, type VMStatus } from '../state.js';

const C = VMCondition.NetworkReady;

/** The annotation the SDN module writes on a launcher pod: the state of each additional interface. */
export const NETWORKS_STATUS_ANNOTATION = 'network.deckhouse.io/networks-status';

const InterfaceStatusSchema = z.array(
  z.looseObject({
    name: z.string().optional(),
    conditions: z.array(z.looseObject({ status: z.string(), message: z.string().optional() })).optional(),
  }),
);

const onlyMainNetwork = (vm: VirtualMachine): boolean => (vm.spec.networks ?? []).every((n) => n.type === 'Main');

/** The Main network's id when the spec names none (the defaulting webhook's, the original's reserved id). */
export const MAIN_NETWORK_ID = 1;
/** The name the original shows for the Main network in status.networks: its pod interface. */
export const MAIN_NETWORK_NAME = 'default';

type NetworkStatus = NonNullable<VMStatus['networks']>[number];

/**
 * status.networks as the original's network handler writes it: a VM with only the Main network (or
 * none listed) shows `{id: 1, type: Main, name: default}`; otherwise each network of the spec in
 * order, Main as `{id, type: Main, name: default}`, an additional one with its id, name, the MAC
 * address the internal VM's interface carries and the address object it came from. The VM's IP
 * address is `status.ipAddress`, not here (the original leaves `ipAddress` empty for Main).
 */
export function networksStatus(s: Pick<VMState, 'obj' | 'kvvm' | 'macs' | 'macNames'>): NetworkStatus[] {
  const networks = s.obj.spec.networks ?? [];
  const main = (id: number | undefined): NetworkStatus => ({ id: id ?? MAIN_NETWORK_ID, type: 'Main', name: MAIN_NETWORK_NAME });
  if (onlyMainNetwork(s.obj)) return [main(networks[0]?.id)];
  const onInterfaces = new Set((s.kvvm?.spec.template.spec?.domain.devices?.interfaces ?? []).map((i) => i.macAddress));
  return networks.map((n, i): NetworkStatus => {
    if (n.type === 'Main') return main(n.id);
    const mac = s.macs?.get(i);
    const macName = s.macNames?.get(i) ?? n.virtualMachineMACAddressName;
    return {
      ...(n.id !== undefined ? { id: n.id } : {}),
      type: n.type,
      ...(n.name !== undefined ? { name: n.name } : {}),
      ...(mac !== undefined && onInterfaces.has(mac) ? { macAddress: mac } : {}),
      ...(macName !== undefined ? { virtualMachineMACAddressName: macName } : {}),
    };
  });
}

/**
 * What is wrong with the additional networks as the launcher pods tell it, in the original's words;
 * '' when nothing. An annotation that is not the SDN module's JSON is named as such (the original
 * fails the reconcile on it; here the VM says so and the rest of its status is still written).
 */
export function networkProblems(pods: readonly Pod[]): string {
  if (pods.length === 0) return 'Waiting for the pod to be created.';
  const messages: string[] = [];
  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (phase === 'Succeeded') continue;
    const raw = pod.metadata.annotations?.[NETWORKS_STATUS_ANNOTATION];
    if (raw === undefined) {
      messages.push(
        phase === 'Running'
          ? 'Cannot determine the status of additional interfaces, waiting for a response from the SDN module'
          : 'Waiting for virt-launcher pod to start',
      );
      continue;
    }
    const parsed = parseStatus(raw);
    if (typeof parsed === 'string') {
      messages.push(`[${pod.metadata.name ?? ''}]: annotation ${NETWORKS_STATUS_ANNOTATION} is not valid: ${parsed}`);
      continue;
    }
    const perInterface = parsed.flatMap((iface) => {
      const failed = (iface.conditions ?? []).filter((c) => c.status !== 'True').map((c) => c.message ?? '');
      return failed.length === 0 ? [] : [`(${iface.name ?? ''}): ${failed.join('; ')}`];
    });
    if (perInterface.length > 0) messages.push(`[${pod.metadata.name ?? ''}]: ${perInterface.join('; ')}`);
  }
  return messages.join('. ');
}

function parseStatus(raw: string): z.infer<typeof InterfaceStatusSchema> | string {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err: unknown) {
    return err instanceof Error ? err.message : 'not JSON';
  }
  const result = InterfaceStatusSchema.safeParse(json);
  return result.success ? result.data : result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

export function networkHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'network',
    handle(s, ctx): void {
      const vm = s.obj;
      if (vm.metadata.deletionTimestamp !== undefined) return;
      if (onlyMainNetwork(vm)) return dropCondition(s, C.type);
      if (!deps.config.SDN_ENABLED) {
        return condition(s, ctx, {
          type: C.type,
          status: 'False',
          reason: C.reason.SDNModuleDisabled,
          message: 'For additional network interfaces, please enable SDN module',
        });
      }
      const problems = networkProblems(podsOfVM(deps.caches.pods, vm));
      if (problems !== '') condition(s, ctx, { type: C.type, status: 'False', reason: C.reason.NetworkNotReady, message: problems });
      else condition(s, ctx, { type: C.type, status: 'True', reason: C.reason.NetworkReady });
    },
  };
}
