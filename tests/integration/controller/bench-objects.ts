/** The objects of the controller benchmark: the world VMs need, the VMs, and their bare equivalents. */
import { CoreV1Api } from '@kubernetes/client-node';
import { Finalizer } from '../../../shared/api/finalizers.js';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass.js';
import { loadConfig } from '../../../daemons/controller/config.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { formatIPv4, ipToLeaseName } from '../../../shared/api/ipv4.js';
import { buildInternalVM } from '../../../daemons/controller/reconcilers/vm/kvvm/build.js';
import { newKubeConfig } from '../../env/index.js';
import { vm } from './builders.js';

export interface World {
  kubeconfigPath: string;
  vmClass: VirtualMachineClass;
  imageName: string;
  imageUid: string;
  /** Create a namespace for one run. */
  namespace(name: string): Promise<string>;
}

/**
 * A node, a Ready class and a Ready cluster image shared by every run; every run's namespace carries
 * `namespaceLabels` (the benchmark's webhooks select their namespaces by label).
 */
export async function prepareWorld(c: Clients, kubeconfigPath: string, namespaceLabels: Record<string, string> = {}): Promise<World> {
  await c.nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'bench-node', labels: { bench: 'true' } } });
  await c.classes.create({
    apiVersion: API_VERSION,
    kind: 'VirtualMachineClass',
    metadata: { name: 'bench' },
    spec: { cpu: { type: 'Model', model: 'Nehalem' }, nodeSelector: { matchLabels: { bench: 'true' } } },
  });
  const cvi = await c.clusterImages.create({
    apiVersion: API_VERSION,
    kind: 'ClusterVirtualImage',
    metadata: { name: 'bench-image' },
    spec: { dataSource: { type: 'HTTP', http: { url: 'https://example.com/alpine.qcow2' } } },
  });
  await c.clusterImages.patchStatus({ name: 'bench-image' }, { phase: 'Ready', cdrom: false, target: { registryURL: 'dvcr/cvi/bench-image:1' } });
  // The class status is the controller's to write; for the bare row it is not needed.
  const vmClass = await c.classes.patchStatus({ name: 'bench' }, { phase: 'Ready', availableNodes: ['bench-node'] });
  const core = newKubeConfig(kubeconfigPath).makeApiClient(CoreV1Api);
  // The module's namespace, as the install makes it: the controller keeps its CA Secret there.
  await core.createNamespace({ body: { metadata: { name: loadConfig({}).POD_NAMESPACE } } });
  return {
    kubeconfigPath,
    vmClass,
    imageName: 'bench-image',
    imageUid: cvi.metadata.uid ?? '',
    async namespace(name: string): Promise<string> {
      await core.createNamespace({ body: { metadata: { name, labels: namespaceLabels } } });
      return name;
    },
  };
}

export function vmObject(world: World, ns: string, i: number): VirtualMachine {
  return vm({ namespace: ns, id: '' }, `vm-${i}`, 'bench', {
    runPolicy: 'Manual',
    cpu: { cores: 1, coreFraction: '25%' },
    memory: { size: '1Gi' },
    blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: world.imageName }],
  });
}

/** The creates of the bare row: per VM the VM, its VMIP, its lease and its internal VM. */
export function baselineObjects(world: World, ns: string, count: number, octet: number): ((c: Clients) => Promise<unknown>)[] {
  const out: ((c: Clients) => Promise<unknown>)[] = [];
  for (let i = 0; i < count; i++) {
    const vm = vmObject(world, ns, i);
    const ip = formatIPv4(10 * 2 ** 24 + octet * 2 ** 16 + 1 + i);
    const vmipName = `vm-${i}-ip`;
    const kvvm = buildInternalVM({
      vm: { ...vm, metadata: { ...vm.metadata, uid: '00000000-0000-0000-0000-000000000000' } },
      vmClass: world.vmClass,
      devices: [{ kind: 'ClusterVirtualImage', name: world.imageName, uid: world.imageUid, source: { image: 'dvcr/cvi/bench-image:1' }, cdrom: false }],
      ipAddress: ip,
      runStrategy: 'Manual',
    });
    out.push(
      (c) => c.vms.create(vm),
      (c) =>
        c.vmips.create({
          apiVersion: API_VERSION,
          kind: 'VirtualMachineIPAddress',
          metadata: { name: vmipName, namespace: ns, finalizers: [Finalizer.vmipCleanup] },
          spec: { type: 'Auto' },
        }),
      (c) =>
        c.leases.create({
          apiVersion: API_VERSION,
          kind: 'VirtualMachineIPAddressLease',
          metadata: { name: ipToLeaseName(ip), finalizers: [Finalizer.vmiplCleanup] },
          spec: { virtualMachineIPAddressRef: { namespace: ns, name: vmipName } },
        }),
      (c) => c.kvvms.create({ ...kvvm, metadata: { ...kvvm.metadata, ownerReferences: [] } }),
    );
  }
  return out;
}
