/**
 * The install reconcile of KubeVirt's configuration: the parts our internal objects need (the
 * bpfbridge binding, the machine types we write, the feature gates we use; shared/api/internal/kubevirt-required.ts)
 * are put back when someone removes them, in one conditional merge patch that touches nothing else.
 * A missing object is left alone: the install applies it (knative/kubevirt/config).
 */
import { kubeVirtRepairPatch, missingKubeVirtParts } from '../../../../shared/api/internal/kubevirt-required.js';
import type { InternalKubeVirt } from '../../../../shared/api/internal/resources.js';
import { conditionalMergePatch, type ResourcePort } from '../../../../shared/kube/index.js';
import { childLogger, type Logger } from '../../../../shared/log/index.js';
import type { CachePort } from '../../deps.js';
import type { ReconcileFn } from '../../engine/runner.js';

export interface KubeVirtConfigReconcilerDeps {
  client: Pick<ResourcePort<InternalKubeVirt>, 'mergePatch'>;
  cache: Pick<CachePort<InternalKubeVirt>, 'get' | 'remember'>;
  /** KUBEVIRT_CONFIG_REPAIR: off, the VMs only report what is missing. */
  repair: boolean;
  logger?: Logger;
}

export function kubeVirtConfigReconciler(d: KubeVirtConfigReconcilerDeps): ReconcileFn {
  const log = d.logger ?? childLogger({ component: 'controller', controller: 'kubevirt-config' });
  return async (key, signal) => {
    const kv = d.cache.get(key);
    if (kv === undefined || !d.repair) return;
    const patch = kubeVirtRepairPatch(kv);
    if (patch === undefined) return;
    const missing = missingKubeVirtParts(kv);
    const ref = { namespace: kv.metadata.namespace, name: kv.metadata.name ?? '' };
    // Conditional on the version read: an edit in between is a conflict, requeued and decided again.
    d.cache.remember(await d.client.mergePatch(ref, conditionalMergePatch(patch, kv.metadata.resourceVersion), { signal }));
    log.info({ object: key, restored: missing }, "restored the parts of KubeVirt's configuration our internal objects need");
  };
}
