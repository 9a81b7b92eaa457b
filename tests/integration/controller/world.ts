/**
 * A small world for one test: a namespace, a node, a Ready class and a Ready cluster image scoped to
 * the test, the controller running in-process and KubeVirt played by the simulator (no launcher pods).
 */
import { afterAll, beforeAll } from '@jest/globals';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import type { KubeClient } from '../../../shared/kube/index.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { freshNamespace } from '../../env/index.js';
import { clusterImage, makeClusterImageReady, node, vm, vmClass } from './builders.js';
import { KubeVirtSimulator } from '../../../platform/simulators/kubevirt-simulator/simulator.js';
import {
  eventually,
  mainKube,
  readWhen,
  newScope,
  startTestController,
  testClients,
  type Scope,
  type TestController,
  type TestStartOptions,
} from './fixtures.js';

export interface World {
  scope: Scope;
  ns: string;
  nodeName: string;
  className: string;
  imageName: string;
  ctl: TestController;
  kubevirt: KubeVirtSimulator;
  /** Create a VM booting from the world's image. */
  createVM(name: string, spec?: Partial<VirtualMachine['spec']>): Promise<VirtualMachine>;
  /** The VM once `check` holds for it. */
  vmWhen(name: string, check: (vm: VirtualMachine) => boolean, what: string, timeoutMs?: number): Promise<VirtualMachine>;
  /** The uid of the VM's instance, or undefined when there is none. */
  instanceUid(name: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

export interface WorldOptions {
  env?: Record<string, string>;
  /** `autoRunOn`: where new instances run at once (default: the world's node); false: KubeVirt is not started. */
  kubevirt?: { autoRunOn?: string } | false;
  /** Start options of the controller beyond its environment. */
  controller?: TestStartOptions;
}

export async function startWorld(kube: KubeClient, c: Clients, prefix: string, options: WorldOptions = {}): Promise<World> {
  const scope = newScope(await freshNamespace(prefix));
  const ns = scope.namespace;
  const nodeObj = await c.nodes.create(node(scope, 'node-1'));
  const nodeName = nodeObj.metadata.name ?? '';
  const cls = await c.classes.create(vmClass(scope, 'generic'));
  const className = cls.metadata.name ?? '';
  const cvi = await c.clusterImages.create(clusterImage(scope, 'alpine'));
  const imageName = cvi.metadata.name ?? '';
  await makeClusterImageReady(c, imageName);
  const ctl = await startTestController(kube, scope, options.env, options.controller);
  const autoRunOn = options.kubevirt === false ? undefined : (options.kubevirt?.autoRunOn ?? nodeName);
  const kubevirt = new KubeVirtSimulator(kube, { namespace: ns, autoRunOn });
  if (options.kubevirt !== false) await kubevirt.start();
  await eventually(async () => (await c.classes.get({ name: className })).status?.phase === 'Ready', 'class Ready');
  const vmWhen = (name: string, check: (v: VirtualMachine) => boolean, what: string, timeoutMs?: number): Promise<VirtualMachine> =>
    readWhen(() => c.vms.get({ namespace: ns, name }), check, `${name}: ${what}`, timeoutMs);
  return {
    scope,
    ns,
    nodeName,
    className,
    imageName,
    ctl,
    kubevirt,
    createVM: (name, spec = {}) => c.vms.create(vm(scope, name, className, { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: imageName }], ...spec })),
    vmWhen,
    async instanceUid(name): Promise<string | undefined> {
      try {
        return (await c.kvvmis.get({ namespace: ns, name })).metadata.uid;
      } catch (err: unknown) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    },
    async stop(): Promise<void> {
      await kubevirt.stop();
      await ctl.stop();
      await c.nodes.delete({ name: nodeName });
    },
  };
}

export { phaseIs } from './fixtures.js';

/** A world for the whole test file: started before the first test, stopped after the last. */
export function useWorld(prefix: string, options: WorldOptions = {}): { readonly w: World; readonly c: Clients } {
  let kube: KubeClient | undefined;
  let c: Clients | undefined;
  let w: World | undefined;
  beforeAll(async () => {
    kube = mainKube();
    c = testClients(kube);
    w = await startWorld(kube, c, prefix, options);
  });
  afterAll(async () => {
    await w?.stop();
    kube?.close();
  });
  return {
    get w(): World {
      if (w === undefined) throw new Error('useWorld: used before beforeAll');
      return w;
    },
    get c(): Clients {
      if (c === undefined) throw new Error('useWorld: used before beforeAll');
      return c;
    },
  };
}
