/**
 * KubeVirt's eviction interceptor (the simulator's) registered with a test's apiserver on
 * `pods/eviction` for one namespace, as KubeVirt registers it, and an eviction as `kubectl drain`
 * posts it. Used beside the simulated KubeVirt (evacuation.test.ts) and beside upstream
 * virt-controller (../kubevirt/evacuation.test.ts).
 */
import { readFile } from 'node:fs/promises';
import type { KubeClient } from '../../../shared/kube/index.js';
import { childLogger } from '../../../shared/log/index.js';
import { simulatorClients } from '../../../platform/simulators/kubevirt-simulator/kube.js';
import {
  EVICTION_WEBHOOK_NAME,
  EVICTION_WEBHOOK_PATH,
  EvictionInterceptor,
} from '../../../platform/simulators/kubevirt-simulator/virt-api/eviction-interceptor.js';
import { createCA, issueCert } from '../../env/index.js';
import { eventually } from './fixtures.js';

export interface EvictionWebhook {
  readonly interceptor: EvictionInterceptor;
  /** The CA of the interceptor's serving certificate. */
  readonly caPem: string;
  /** Removes the webhook configuration and stops the interceptor. */
  stop(): Promise<void>;
}

/** POST an Eviction for `pod` as kubectl drain does; the apiserver's answer, or the error it threw. */
export async function evictPod(kube: KubeClient, namespace: string, pod: string, opts: { dryRun?: boolean; body?: unknown } = {}): Promise<unknown> {
  const body = opts.body ?? {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: pod, namespace },
    deleteOptions: { gracePeriodSeconds: 0, ...(opts.dryRun === true ? { dryRun: ['All'] } : {}) },
  };
  try {
    return await kube.rest.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/pods/${pod}/eviction`, body, what: `evict pod ${pod}` });
  } catch (err: unknown) {
    return err;
  }
}

/**
 * Start the interceptor (certificates under `dir`), register it for `namespace` under `name`, and
 * resolve once the apiserver calls it: a dry-run eviction of a plain pod (on `nodeName` when given) shows it.
 */
export async function startEvictionWebhook(kube: KubeClient, o: { dir: string; name: string; namespace: string; nodeName?: string }): Promise<EvictionWebhook> {
  const sim = simulatorClients(kube);
  const ca = await createCA(o.dir, 'eviction');
  const cert = await issueCert(ca, o.dir, 'serving', { commonName: '127.0.0.1', usage: 'server', ipAddresses: ['127.0.0.1'] });
  const caPem = await readFile(ca.certPath, 'utf8');
  const interceptor = new EvictionInterceptor({
    clients: sim,
    clusterStrategy: 'LiveMigrate',
    tls: { cert: await readFile(cert.certPath, 'utf8'), key: await readFile(cert.keyPath, 'utf8') },
    log: childLogger({ component: 'eviction-interceptor-test' }),
  });
  await interceptor.start();
  const path = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  const stop = async (): Promise<void> => {
    await kube.rest.request({ method: 'DELETE', path: `${path}/${o.name}`, what: 'delete the eviction webhook configuration' }).catch(() => undefined);
    await interceptor.stop();
  };
  try {
    await kube.rest.request({
      method: 'POST',
      path,
      what: 'create the eviction webhook configuration',
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: o.name },
        webhooks: [
          {
            name: EVICTION_WEBHOOK_NAME,
            clientConfig: { url: `${interceptor.url}${EVICTION_WEBHOOK_PATH}`, caBundle: Buffer.from(caPem).toString('base64') },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], scope: 'Namespaced' }],
            // As KubeVirt v1.6 registers it (virt-operator's webhooks.go): a failing interceptor refuses the
            // eviction, so a test never mistakes a webhook error for an eviction let through.
            failurePolicy: 'Fail',
            sideEffects: 'NoneOnDryRun',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 10,
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': o.namespace } },
          },
        ],
      },
    });
    await sim.pods.create({
      metadata: { name: 'probe', namespace: o.namespace, labels: { app: 'probe' } },
      spec: { ...(o.nodeName === undefined ? {} : { nodeName: o.nodeName }), containers: [{ name: 'c', image: 'probe' }] },
    });
    await eventually(async () => {
      await evictPod(kube, o.namespace, 'probe', { dryRun: true });
      return interceptor.reviews > 0;
    }, 'the apiserver calls the eviction interceptor');
  } catch (err: unknown) {
    await stop();
    throw err;
  }
  return { interceptor, caPem, stop };
}
