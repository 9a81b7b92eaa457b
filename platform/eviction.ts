/**
 * virt-api's eviction interceptor in `npm start`: the KubeVirt simulator serves it (with the virt-api
 * stand-in's serving pair, platform/subresources.ts) and this registers it as virt-operator registers
 * KubeVirt's: a ValidatingWebhookConfiguration on `pods/eviction` CREATE, failurePolicy Ignore (a
 * missing interceptor lets evictions through). Then `kubectl drain` of a node with VMs is refused with
 * `Eviction triggered evacuation of VMI ...` and the controller migrates the VMs away.
 */
import { readFile } from 'node:fs/promises';
import type { KubeClient } from '../shared/kube/index.js';
import { EVICTION_WEBHOOK_NAME, EVICTION_WEBHOOK_PATH } from './simulators/kubevirt-simulator/virt-api/eviction-interceptor.js';

export const EVICTION_WEBHOOK_CONFIGURATION = 'virt-launcher-eviction-interceptor';

/** Register (or update) the interceptor at `https://127.0.0.1:<port>`, its serving certificate signed by the CA in `caFile`. */
export async function registerEvictionInterceptor(kube: KubeClient, port: number, caFile: string): Promise<void> {
  const caBundle = (await readFile(caFile)).toString('base64');
  await kube.rest.request({
    method: 'PATCH',
    path: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${EVICTION_WEBHOOK_CONFIGURATION}`,
    query: { fieldManager: 'local-platform', force: true },
    contentType: 'application/apply-patch+yaml',
    what: `register the eviction interceptor on 127.0.0.1:${port}`,
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: EVICTION_WEBHOOK_CONFIGURATION, labels: { 'app.kubernetes.io/name': 'kubevirt-simulator' } },
      webhooks: [
        {
          name: EVICTION_WEBHOOK_NAME,
          clientConfig: { url: `https://127.0.0.1:${port}${EVICTION_WEBHOOK_PATH}`, caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], scope: 'Namespaced' }],
          failurePolicy: 'Ignore',
          sideEffects: 'NoneOnDryRun',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 10,
        },
      ],
    },
  });
}
