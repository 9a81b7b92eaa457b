/**
 * KubeVirt's configuration object as the controller sees it: one informer on `config` in
 * KUBEVIRT_CONFIG_NAMESPACE, shared by the install reconcile (which repairs it) and the VM reconciler
 * (which reports VMs affected while it lacks a part our internal objects need).
 */
import { KUBEVIRT_CONFIG_NAME, missingKubeVirtParts } from '../../../../shared/api/internal/kubevirt-required.js';
import { InternalKubeVirtSchema, internalKubeVirt, type InternalKubeVirt } from '../../../../shared/api/internal/resources.js';
import { NotFoundError } from '../../../../shared/errors/index.js';
import { descriptorOf, objectKey, type KubeClient, type ResourceClient } from '../../../../shared/kube/index.js';
import type { Logger } from '../../../../shared/log/index.js';
import type { ControllerConfig } from '../../config.js';
import type { KubeVirtConfigPort } from '../../deps.js';
import type { Wiring } from '../../declaration.js';
import type { ObjectCache } from '../../engine/cache.js';
import { FIELD_MANAGER } from '../../kube/resources.js';

export interface KubeVirtConfigParts {
  readonly client: ResourceClient<InternalKubeVirt>;
  readonly cache: ObjectCache<InternalKubeVirt>;
  readonly port: KubeVirtConfigPort;
}

export const kubeVirtConfigClient = (kube: KubeClient): ResourceClient<InternalKubeVirt> =>
  kube.resource(descriptorOf(internalKubeVirt), InternalKubeVirtSchema, FIELD_MANAGER);

/** The object's key and the field selector that watches only it. */
export function configRef(config: ControllerConfig): { namespace: string; name: string; key: string; fieldSelector: string } {
  const namespace = config.KUBEVIRT_CONFIG_NAMESPACE;
  return {
    namespace,
    name: KUBEVIRT_CONFIG_NAME,
    key: objectKey({ namespace, name: KUBEVIRT_CONFIG_NAME }),
    fieldSelector: `metadata.name=${KUBEVIRT_CONFIG_NAME}`,
  };
}

/** Built once per controller (w.shared). */
export function kubeVirtConfigParts(w: Wiring): KubeVirtConfigParts {
  const client = kubeVirtConfigClient(w.kube);
  const ref = configRef(w.config);
  const cache = w.informer(client, { namespace: ref.namespace, fieldSelector: ref.fieldSelector });
  return { client, cache, port: configPort(cache, ref.key) };
}

/** What the VM reconciler reads: the parts missing from the object (none while it does not exist: KubeVirt is not installed yet, or a simulator plays it). */
export function configPort(cache: Pick<ObjectCache<InternalKubeVirt>, 'get'>, key: string): KubeVirtConfigPort {
  return {
    where: `InternalVirtualizationKubeVirt ${key}`,
    missing: () => {
      const kv = cache.get(key);
      return kv === undefined ? [] : missingKubeVirtParts(kv);
    },
  };
}

/** Nothing to report: KubeVirt's configuration resource is not served here. */
export const noKubeVirtConfig: KubeVirtConfigPort = { where: 'none', missing: () => [] };

/** Whether the apiserver serves KubeVirt's configuration resource (404: not, the reconcile stays off); any other answer counts as served, its informer retries. */
export async function kubeVirtConfigServed(kube: KubeClient, config: ControllerConfig, signal: AbortSignal, log: Logger): Promise<boolean> {
  const ref = configRef(config);
  try {
    await kubeVirtConfigClient(kube).listRaw({ namespace: ref.namespace, fieldSelector: ref.fieldSelector, signal });
    return true;
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError)) return true;
    log.info('KubeVirt configuration objects are not served: its install reconcile stays off');
    return false;
  }
}
