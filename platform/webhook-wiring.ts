/**
 * How a kube-apiserver reaches a webhook served by a local process while the webhook configurations
 * (and CRD conversion webhooks) keep their Service reference: the Service becomes `type: ExternalName,
 * externalName: 127.0.0.1` (the apiserver resolves an ExternalName Service to that host) and each
 * webhook that calls it gets the local port in `clientConfig.service.port`. The apiserver still verifies the certificate for
 * `<service>.<namespace>.svc` against the injected caBundle, exactly as in a cluster. (kwok wires
 * host processes behind APIServices the same way.)
 */
import { ConflictError, NotFoundError } from '../shared/errors/index.js';
import type { KubeClient } from '../shared/kube/index.js';

const WEBHOOK_KINDS = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'] as const;

interface WebhookConfiguration {
  metadata: { name: string };
  webhooks?: { name: string; clientConfig: { service?: { name: string; namespace: string; port?: number } } }[];
}

async function request(kube: KubeClient, method: 'GET' | 'POST' | 'DELETE' | 'PATCH', path: string, what: string, body?: unknown, contentType?: string): Promise<unknown> {
  return kube.rest.request({ method, path, what, ...(body !== undefined ? { body } : {}), ...(contentType !== undefined ? { contentType } : {}) });
}

/** Replace Service `namespace/name` by an ExternalName to 127.0.0.1 (same port names). */
export async function serviceToLoopback(kube: KubeClient, namespace: string, name: string): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/services`;
  await request(kube, 'DELETE', `${path}/${name}`, `delete Service ${namespace}/${name}`).catch((err: unknown) => {
    if (!(err instanceof NotFoundError)) throw err;
  });
  const body = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { 'app.kubernetes.io/name': name } },
    spec: { type: 'ExternalName', externalName: '127.0.0.1', ports: [{ name: 'https', port: 443 }] },
  };
  for (let attempt = 0; ; attempt++) {
    try {
      await request(kube, 'POST', path, `create Service ${namespace}/${name}`, body);
      return;
    } catch (err: unknown) {
      // The old Service may still be going away.
      if (!(err instanceof ConflictError) || attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Point every webhook (in every validating and mutating configuration) that calls Service
 * `namespace/name` at `port`; returns how many were changed.
 */
export async function webhooksToPort(kube: KubeClient, namespace: string, name: string, port: number): Promise<number> {
  let changed = 0;
  for (const kind of WEBHOOK_KINDS) {
    const base = `/apis/admissionregistration.k8s.io/v1/${kind}`;
    const list = (await request(kube, 'GET', base, `list ${kind}`)) as { items: WebhookConfiguration[] };
    for (const cfg of list.items) {
      const ops = (cfg.webhooks ?? []).flatMap((w, i) =>
        w.clientConfig.service?.name === name && w.clientConfig.service.namespace === namespace && w.clientConfig.service.port !== port
          ? [{ op: 'replace', path: `/webhooks/${i}/clientConfig/service/port`, value: port }]
          : [],
      );
      if (ops.length === 0) continue;
      // Test the names too, so that a concurrent change of the list never moves a port to another webhook.
      const tests = (cfg.webhooks ?? []).map((w, i) => ({ op: 'test', path: `/webhooks/${i}/name`, value: w.name }));
      await request(kube, 'PATCH', `${base}/${cfg.metadata.name}`, `patch ${kind} ${cfg.metadata.name}`, [...tests, ...ops], 'application/json-patch+json');
      changed += ops.length;
    }
  }
  return changed;
}

interface CustomResourceDefinition {
  metadata: { name: string };
  spec: { conversion?: { webhook?: { clientConfig?: { service?: { name: string; namespace: string; port?: number } } } } };
}

/** Point every CRD conversion webhook that calls Service `namespace/name` at `port`; returns how many were changed. */
export async function conversionsToPort(kube: KubeClient, namespace: string, name: string, port: number): Promise<number> {
  const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const list = (await request(kube, 'GET', base, 'list CustomResourceDefinitions')) as { items: CustomResourceDefinition[] };
  let changed = 0;
  for (const crd of list.items) {
    const service = crd.spec.conversion?.webhook?.clientConfig?.service;
    if (service?.name !== name || service.namespace !== namespace || service.port === port) continue;
    const patch = { spec: { conversion: { webhook: { clientConfig: { service: { port } } } } } };
    await request(kube, 'PATCH', `${base}/${crd.metadata.name}`, `patch CustomResourceDefinition ${crd.metadata.name}`, patch, 'application/merge-patch+json');
    changed++;
  }
  return changed;
}

/**
 * All of it: the apiserver calls the local process on `port` for every admission webhook and every
 * CRD conversion webhook of Service `namespace/name`; returns how many calls were rerouted.
 */
export async function routeWebhooksToLocal(kube: KubeClient, namespace: string, name: string, port: number): Promise<number> {
  await serviceToLoopback(kube, namespace, name);
  return (await webhooksToPort(kube, namespace, name, port)) + (await conversionsToPort(kube, namespace, name, port));
}
