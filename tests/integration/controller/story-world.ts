/**
 * The set-up of a VM story: a controller for a fresh namespace, the KubeVirt simulator, one node,
 * a class, and an image and a disk already Ready. Tests then create the VM and play it through.
 */
import type { KubeClient } from '../../../shared/kube/index.js';
import { freshNamespace } from '../../env/index.js';
import { disk, image, makeDiskReady, makeImageReady, node, vmClass } from './builders.js';
import { KubeVirtSimulator } from '../../../platform/simulators/kubevirt-simulator/simulator.js';
import { newScope, startTestController, type ClusterHandle, type Scope, type TestStartOptions } from './fixtures.js';

export interface StoryWorld {
  readonly scope: Scope;
  readonly ns: string;
  readonly nodeName: string;
  readonly className: string;
  readonly kubevirt: KubeVirtSimulator;
}

/** Image `ubuntu` and disk `data` are Ready; KubeVirt is created but not started. */
export async function startStoryWorld(
  t: ClusterHandle,
  opts: { prefix: string; env: Record<string, string>; controllerKube?: KubeClient; controller?: TestStartOptions },
): Promise<StoryWorld> {
  const scope = newScope(await freshNamespace(opts.prefix));
  const ns = scope.namespace;
  const ctl = await startTestController(opts.controllerKube ?? t.kube, scope, opts.env, opts.controller);
  t.onCleanup(() => ctl.stop());
  const kubevirt = new KubeVirtSimulator(t.kube, { namespace: ns });
  t.onCleanup(() => kubevirt.stop());

  const n = await t.c.nodes.create(node(scope, `node-${opts.prefix}`));
  const nodeName = n.metadata.name ?? '';
  t.onCleanup(() => t.c.nodes.delete({ name: nodeName }));
  const cls = await t.c.classes.create(vmClass(scope, 'generic'));
  await t.c.images.create(image(scope, 'ubuntu'));
  await makeImageReady(t.c, scope, 'ubuntu');
  await t.c.disks.create(disk(scope, 'data'));
  await makeDiskReady(t.c, scope, 'data');
  return { scope, ns, nodeName, className: cls.metadata.name ?? '', kubevirt };
}
