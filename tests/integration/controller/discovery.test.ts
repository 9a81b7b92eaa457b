/**
 * A Discovery class becomes Ready from the CPU features the nodes advertise, with no hand labelling:
 * the KubeVirt simulator labels the nodes as KubeVirt's node labeller does, and the class intersects them.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeClient } from '../../../shared/kube/index.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { DEFAULT_OFFER, KubeVirtSimulator } from '../../../platform/simulators/kubevirt-simulator/simulator.js';
import { freshNamespace } from '../../env/index.js';
import { node, vmClass } from './builders.js';
import { SCOPE_LABEL, eventually, mainKube, newScope, startTestController, testClients, type Scope } from './fixtures.js';

let kube: KubeClient;
let c: Clients;
let scope: Scope;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  kube = mainKube();
  c = testClients(kube);
  scope = newScope(await freshNamespace('ctl-discovery'));
  for (const n of ['a', 'b']) {
    const made = await c.nodes.create(node(scope, n));
    cleanups.push(() => c.nodes.delete({ name: made.metadata.name ?? '' }));
  }
  const ctl = await startTestController(kube, scope);
  cleanups.push(() => ctl.stop());
  const kubevirt = new KubeVirtSimulator(kube, {
    namespace: scope.namespace,
    labelNodes: true,
    nodeSelector: `${SCOPE_LABEL}=${scope.id}`,
    // Node b's host lacks avx2: the class may only use what both have.
    nodeOffer: (n) => (n.metadata.name?.startsWith('b-') === true ? { ...DEFAULT_OFFER, cpuFeatures: ['aes', 'avx', 'sse4.2'] } : DEFAULT_OFFER),
  });
  await kubevirt.start();
  cleanups.push(() => kubevirt.stop());
});
afterAll(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  kube.close();
});

describe('a Discovery class on simulated nodes', () => {
  it('becomes Ready with the features every node advertises', async () => {
    const cls = await c.classes.create(vmClass(scope, 'discover', { cpu: { type: 'Discovery' } }));
    const got = await eventually(async () => {
      const x = await c.classes.get({ name: cls.metadata.name ?? '' });
      return x.status?.phase === 'Ready' && x;
    }, 'class Ready');
    expect(got.status?.cpuFeatures?.enabled).toEqual(['aes', 'avx', 'sse4.2']);
    expect(got.status?.availableNodes).toHaveLength(2);
  });
});
