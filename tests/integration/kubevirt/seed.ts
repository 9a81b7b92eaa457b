/**
 * The user's side of a real-KubeVirt test: a namespace of its own, kwok Node objects in its scope
 * (the class places VMs on them), a class and a ready cluster image the VMs boot from.
 */
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { createNodes } from '../../../platform/local-cluster.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { clusterImage, makeClusterImageReady, vmClass as classOf } from '../controller/builders.js';
import { newScope, SCOPE_LABEL, testClients, type Scope } from '../controller/scope.js';
import type { RealKubeVirt } from './real-kubevirt.js';

export interface Seeded {
  readonly kube: KubeClient;
  readonly c: Clients;
  readonly scope: Scope;
  readonly className: string;
  readonly imageName: string;
}

export async function seedUserSide(kv: RealKubeVirt, prefix: string, nodes: number): Promise<Seeded> {
  const kube = new KubeClient(kv.apiserver.kubeConfig());
  const c = testClients(kube);
  const scope = newScope(prefix);
  await kv.ok(['create', 'namespace', scope.namespace]);
  for (const n of await createNodes(kube, nodes)) await kv.ok(['label', 'node', n, `${SCOPE_LABEL}=${scope.id}`]);
  const className = (await c.classes.create(classOf(scope, 'generic'))).metadata.name ?? '';
  const imageName = (await c.clusterImages.create(clusterImage(scope, 'ubuntu'))).metadata.name ?? '';
  await makeClusterImageReady(c, imageName);
  return { kube, c, scope, className, imageName };
}
