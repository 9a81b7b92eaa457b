/**
 * The system with real KubeVirt for a test file: upstream virt-api and virt-controller (v1.6.0)
 * behind our api-rewriter with the install's KubeVirt configuration, kube-controller-manager,
 * kube-scheduler and kwok nodes, our controller, and the simulator only as virt-handler (role
 * node-agent); plus the waits such tests share, whose timeouts say what was seen.
 */
import { KubeVirtSimulator } from '../../../platform/simulators/kubevirt-simulator/simulator.js';
import { VM_NAME_LABEL } from '../../../shared/api/internal/launcher.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { startTestController, type TestController, type TestStartOptions } from '../controller/fixtures.js';
import { startRealCluster } from './real-cluster.js';
import { INTERNAL, type RealKubeVirt } from './real-kubevirt.js';
import type { Seeded } from './seed.js';

const WAIT = { timeoutMs: 100_000 };

export interface LauncherPodView {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status?: { phase?: string };
}

export interface RealSystem extends Seeded {
  readonly kv: RealKubeVirt;
  readonly controller: TestController;
  readonly agent: KubeVirtSimulator;
  /** `check` on the VM `name` until it holds; a timeout shows the VM, its VMI, its pods, the nodes and virt-controller's last words. */
  until<T>(name: string, what: string, check: () => Promise<T | undefined>): Promise<T>;
  vmWhen(name: string, what: string, check: (v: VirtualMachine) => boolean): Promise<VirtualMachine>;
  launcherPods(vmName: string): Promise<LauncherPodView[]>;
  stop(): Promise<void>;
}

/** What a test adds to the controller once the user's side is seeded: config keys, ports, and what to stop after it. */
export interface ControllerExtras {
  readonly env?: Record<string, string>;
  readonly options?: TestStartOptions;
  stop?(): Promise<void>;
}

/** Start it all for a test file named `name`, with `nodes` kwok nodes and the controller's VM CIDR `cidr`. */
export async function startRealSystem(
  name: string,
  o: { nodes: number; cidr: string; serviceAccountAdmission?: boolean; controller?: (kv: RealKubeVirt, seeded: Seeded) => Promise<ControllerExtras> },
): Promise<RealSystem> {
  const cluster = await startRealCluster(name, { nodes: o.nodes, serviceAccountAdmission: o.serviceAccountAdmission === true });
  const { kv, seeded } = cluster;
  let controller: TestController | undefined;
  let agent: KubeVirtSimulator | undefined;
  let extras: ControllerExtras | undefined;
  const stop = async (): Promise<void> => {
    await agent?.stop();
    await controller?.stop();
    await extras?.stop?.();
    await cluster.stop();
  };
  try {
    extras = await o.controller?.(kv, seeded);
    controller = await startTestController(seeded.kube, seeded.scope, { VIRTUAL_MACHINE_CIDRS: o.cidr, ...extras?.env }, extras?.options);
    agent = new KubeVirtSimulator(seeded.kube, { role: 'node-agent', namespace: seeded.scope.namespace, migrationDelayMs: 500 });
    await agent.start();
  } catch (err: unknown) {
    await stop();
    throw err;
  }
  const { c, scope } = seeded;
  const ns = scope.namespace;
  const diagnose = async (vm: string): Promise<string> => {
    const get = async (args: string[]): Promise<string> => (await kv.kubectl([...args, '-n', ns, '-o', 'yaml'])).stdout;
    return [
      await get(['get', 'virtualmachines.virtualization.deckhouse.io', vm]),
      await get(['get', `internalvirtualizationvirtualmachineinstances.${INTERNAL}`, vm]),
      await get(['get', `internalvirtualizationvirtualmachineinstancemigrations.${INTERNAL}`]),
      await get(['get', 'pods', '-l', `${VM_NAME_LABEL}=${vm}`]),
      (
        await kv.kubectl([
          'get',
          'nodes',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.spec.taints} {.status.allocatable} {.metadata.labels}{"\\n"}{end}',
        ])
      ).stdout,
      kv.controllerLog().split('\n').slice(-30).join('\n'),
    ].join('\n---\n');
  };
  const until = async <T>(vm: string, what: string, check: () => Promise<T | undefined>): Promise<T> => {
    try {
      return await waitFor(`${vm}: ${what}`, check, WAIT);
    } catch (err: unknown) {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${await diagnose(vm)}`, { cause: err });
    }
  };
  return {
    ...seeded,
    kv,
    controller,
    agent,
    until,
    vmWhen: (vm, what, check) =>
      until(vm, what, async () => {
        const v = await c.vms.get({ namespace: ns, name: vm });
        return check(v) ? v : undefined;
      }),
    launcherPods: async (vm) => {
      const out = await kv.ok(['get', 'pods', '-n', ns, '-l', `${VM_NAME_LABEL}=${vm}`, '-o', 'json']);
      return (JSON.parse(out) as { items: LauncherPodView[] }).items;
    },
    stop,
  };
}
