/** Pools for the controller's integration tests: a builder, the pool client, and playing the disk controller for pool-made disks. */
import { API_VERSION } from '../../../shared/api/resources/common.js';
import { VirtualMachinePoolSchema, virtualMachinePool, type VirtualMachinePool } from '../../../shared/api/resources/vmpool.js';
import { descriptorOf, type KubeClient, type ResourceClient } from '../../../shared/kube/index.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { vm } from './builders.js';
import { TEST_FIELD_MANAGER } from './fixtures.js';
import type { World } from './world.js';

type PoolSpec = VirtualMachinePool['spec'];

export function poolClient(kube: KubeClient): ResourceClient<VirtualMachinePool> {
  return kube.resource(descriptorOf(virtualMachinePool), VirtualMachinePoolSchema, TEST_FIELD_MANAGER);
}

/** A pool of the world's class: one disk template `root` (Delete unless `reclaim` says otherwise) and the world's image shared. */
export function pool(w: World, name: string, spec: Partial<PoolSpec> = {}): VirtualMachinePool {
  const vmSpec = vm(w.scope, 'x', w.className, {
    blockDeviceRefs: [
      { kind: 'VirtualDisk', name: 'root' },
      { kind: 'ClusterVirtualImage', name: w.imageName },
    ],
  }).spec;
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachinePool',
    metadata: { name, namespace: w.ns },
    spec: {
      replicas: 3,
      scaleDownPolicy: 'NewestFirst',
      virtualDiskTemplates: [{ name: 'root', spec: { persistentVolumeClaim: { size: '1Gi' } } }],
      virtualMachineTemplate: {
        metadata: { labels: { app: name } },
        spec: { ...vmSpec, osType: 'Generic', liveMigrationPolicy: 'PreferSafe' },
      },
      ...spec,
    },
  };
}

/** Play the disk controller: every disk in the namespace that is not Ready becomes Ready. */
export async function makeAllDisksReady(c: Clients, ns: string): Promise<void> {
  for (const d of (await c.disks.list({ namespace: ns })).items) {
    if (d.status?.phase === 'Ready' || d.metadata.deletionTimestamp !== undefined) continue;
    await c.disks.patchStatus(
      { namespace: ns, name: d.metadata.name ?? '' },
      { phase: 'Ready', capacity: '1Gi', target: { persistentVolumeClaimName: `vd-${d.metadata.name ?? ''}` } },
    );
  }
}
