/** The world VirtualMachine rule tests start from: the generic default class and one CIDR. */
import { emptyWorld, type World } from '../../testing/fake-lookups.js';
import { typed } from '../../testing/objects.js';

export const SDN_NETWORKS = 'network.deckhouse.io/v1alpha1/networks';
export const VPA = 'autoscaling.k8s.io/v1/verticalpodautoscalers';
export const DRA = 'resource.k8s.io/v1/resourceclaims';

export function vmWorld(): World {
  const w = emptyWorld();
  w.classes.push(typed.vmClass());
  return w;
}

export const withSdn = (w: World): void => {
  w.apis.push(SDN_NETWORKS);
  w.networks.push({ kind: 'Network', namespace: 'ns1', name: 'net-a' }, { kind: 'ClusterNetwork', namespace: '', name: 'cnet' });
};
