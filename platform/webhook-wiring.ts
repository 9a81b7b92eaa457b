/**
 * How a kube-apiserver reaches a webhook served by a local process while the webhook configurations
 * (and CRD conversion webhooks) keep their Service reference: the Service becomes `type: ExternalName,
 * externalName: 127.0.0.1` (the apiserver resolves an ExternalName Service to that host) and each
 * webhook that calls it gets the local port in `clientConfig.service.port`. The apiserver still verifies the certificate for
 * `<service>.<namespace>.svc` against the injected caBundle, exactly as in a cluster. (kwok wires
 * host processes behind APIServices the same way.)
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../shared/api/k8s/core.js';
import { ConflictError, errorMessage, NotFoundError } from '../shared/errors/index.js';
import { Informer, type KubeClient } from '../shared/kube/index.js';
import { rootLogger } from '../shared/log/index.js';

const WEBHOOK_KINDS = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'] as const;

interface WebhookConfiguration {
  metadata: { name: string };
  webhooks?: { name: string; clientConfig: { service?: { name: string; namespace: string; port?: number } } }[];
}

async function request(
  kube: KubeClient,
  method: 'GET' | 'POST' | 'DELETE' | 'PATCH',
  path: string,
  what: string,
  body?: unknown,
  contentType?: string,
): Promise<unknown> {
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

const WEBHOOK_CONFIG_PATH = (kind: string): string => `/apis/admissionregistration.k8s.io/v1/${kind}`;
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

interface CustomResourceDefinition {
  metadata: { name: string };
  spec: { conversion?: { webhook?: { clientConfig?: { service?: { name: string; namespace: string; port?: number } } } } };
}

interface Target {
  namespace: string;
  name: string;
  port: number;
}

/** Point the webhooks of one configuration that call the target Service at its port; how many changed. */
async function repairWebhookConfiguration(kube: KubeClient, kind: string, cfg: WebhookConfiguration, t: Target): Promise<number> {
  const ops = (cfg.webhooks ?? []).flatMap((w, i) =>
    w.clientConfig.service?.name === t.name && w.clientConfig.service.namespace === t.namespace && w.clientConfig.service.port !== t.port
      ? [{ op: 'replace', path: `/webhooks/${i}/clientConfig/service/port`, value: t.port }]
      : [],
  );
  if (ops.length === 0) return 0;
  // Test the names too, so that a concurrent change of the list never moves a port to another webhook.
  const tests = (cfg.webhooks ?? []).map((w, i) => ({ op: 'test', path: `/webhooks/${i}/name`, value: w.name }));
  const path = `${WEBHOOK_CONFIG_PATH(kind)}/${cfg.metadata.name}`;
  await request(kube, 'PATCH', path, `patch ${kind} ${cfg.metadata.name}`, [...tests, ...ops], 'application/json-patch+json');
  return ops.length;
}

/** Point the conversion webhook of one CRD at the target's port when it calls the target Service. */
async function repairConversion(kube: KubeClient, crd: CustomResourceDefinition, t: Target): Promise<number> {
  const service = crd.spec.conversion?.webhook?.clientConfig?.service;
  if (service?.name !== t.name || service.namespace !== t.namespace || service.port === t.port) return 0;
  const patch = { spec: { conversion: { webhook: { clientConfig: { service: { port: t.port } } } } } };
  await request(
    kube,
    'PATCH',
    `${CRD_PATH}/${crd.metadata.name}`,
    `patch CustomResourceDefinition ${crd.metadata.name}`,
    patch,
    'application/merge-patch+json',
  );
  return 1;
}

/**
 * Point every webhook (in every validating and mutating configuration) that calls Service
 * `namespace/name` at `port`; returns how many were changed.
 */
export async function webhooksToPort(kube: KubeClient, namespace: string, name: string, port: number): Promise<number> {
  let changed = 0;
  for (const kind of WEBHOOK_KINDS) {
    const list = (await request(kube, 'GET', WEBHOOK_CONFIG_PATH(kind), `list ${kind}`)) as { items: WebhookConfiguration[] };
    for (const cfg of list.items) changed += await repairWebhookConfiguration(kube, kind, cfg, { namespace, name, port });
  }
  return changed;
}

/** Point every CRD conversion webhook that calls Service `namespace/name` at `port`; returns how many were changed. */
export async function conversionsToPort(kube: KubeClient, namespace: string, name: string, port: number): Promise<number> {
  const list = (await request(kube, 'GET', CRD_PATH, 'list CustomResourceDefinitions')) as { items: CustomResourceDefinition[] };
  let changed = 0;
  for (const crd of list.items) changed += await repairConversion(kube, crd, { namespace, name, port });
  return changed;
}

/**
 * All of it once: the apiserver calls the local process on `port` for every admission webhook and
 * every CRD conversion webhook of Service `namespace/name`; returns how many calls were rerouted.
 */
export async function routeWebhooksToLocal(kube: KubeClient, namespace: string, name: string, port: number): Promise<number> {
  await serviceToLoopback(kube, namespace, name);
  return (await webhooksToPort(kube, namespace, name, port)) + (await conversionsToPort(kube, namespace, name, port));
}

const LooseSchema = z.looseObject({ apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema });
type Loose = z.infer<typeof LooseSchema>;

/**
 * The routing kept for as long as the platform runs: whoever writes a webhook configuration or a CRD
 * later (a re-applied install, the certificate manager setting a conversion webhook) gets the port
 * put back at once, the way a Service keeps pointing at its pods whatever the manifests say.
 */
export class WebhookRoute {
  private readonly abort = new AbortController();
  private readonly informers: Informer<Loose>[] = [];

  constructor(
    private readonly kube: KubeClient,
    private readonly target: Target,
    private readonly onError: (message: string) => void = () => undefined,
  ) {}

  /** Route once, then watch; resolves with how many calls were rerouted at first. */
  async start(): Promise<number> {
    const { namespace, name, port } = this.target;
    const first = await routeWebhooksToLocal(this.kube, namespace, name, port);
    const watch = (group: string, plural: string, kind: string, repair: (o: Loose) => Promise<number>): void => {
      const client = this.kube.resource({ group, version: 'v1', plural, kind, namespaced: false }, LooseSchema, 'virtualization-platform');
      // Its own restarts are routine here; the platform's screen is no place for them.
      const inf = new Informer<Loose>({ client, signal: this.abort.signal, logger: rootLogger.child({ component: 'webhook-route' }, { level: 'silent' }) });
      const onChange = (o: Loose): void => {
        repair(o).catch((err: unknown) => this.onError(`could not route ${kind} ${o.metadata.name ?? ''} to 127.0.0.1:${port}: ${errorMessage(err)}`));
      };
      inf.on('add', onChange);
      inf.on('update', onChange);
      this.informers.push(inf.start());
    };
    for (const kind of WEBHOOK_KINDS) {
      const kindName = kind === 'validatingwebhookconfigurations' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration';
      watch('admissionregistration.k8s.io', kind, kindName, (o) =>
        repairWebhookConfiguration(this.kube, kind, o as unknown as WebhookConfiguration, this.target),
      );
    }
    watch('apiextensions.k8s.io', 'customresourcedefinitions', 'CustomResourceDefinition', (o) =>
      repairConversion(this.kube, o as unknown as CustomResourceDefinition, this.target),
    );
    await Promise.all(this.informers.map((i) => i.synced));
    return first;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.informers.map((i) => i.stop()));
  }
}
