import { beforeAll, describe, expect, it } from '@jest/globals';
import { WEBHOOKS } from '../../../functions/admission/webhooks.js';
import { containersOf, isKnativeService, keyOf, kustomize, podSpecOf, type Manifest } from './manifests.js';

const NAMESPACE = 'd8-virtualization';
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'APIService',
  'DeviceClass',
]);
/** The one object outside the module namespace: the aggregated API reads the front-proxy CA there. */
// The subresources API reads the front-proxy CA in kube-system; pre-delete records Events on the
// cluster-scoped ModuleConfig, which live in `default`.
const ALLOWED_ELSEWHERE = new Set([
  'RoleBinding/kube-system/d8:virtualization:subresources:auth-reader',
  'Role/default/d8:virtualization:pre-delete:events',
  'RoleBinding/default/d8:virtualization:pre-delete:events',
]);

let objects: Manifest[] = [];
const find = (kind: string, name: string, apiVersion?: string): Manifest | undefined =>
  objects.find((m) => m.kind === kind && m.metadata.name === name && (apiVersion === undefined || m.apiVersion === apiVersion));
type Ref = { apiVersion: string; kind: string; name: string };

beforeAll(async () => {
  objects = await kustomize();
});

describe('wiring of the install', () => {
  it('puts every namespaced object into d8-virtualization', () => {
    const misplaced = objects.filter((m) => !CLUSTER_SCOPED.has(m.kind) && m.metadata.namespace !== NAMESPACE && !ALLOWED_ELSEWHERE.has(keyOf(m))).map(keyOf);
    expect(misplaced).toEqual([]);
    expect(find('Namespace', NAMESPACE)).toBeDefined();
  });

  it("points every webhook at the admission Service on 443, which selects the admission pods on their queue-proxy's TLS port (the function behind it on plain HTTP)", () => {
    const configs = objects.filter((m) => m.kind.endsWith('WebhookConfiguration'));
    const services = configs.flatMap((c) =>
      (c['webhooks'] as Array<{ clientConfig: { service: { name: string; namespace: string; port: number; path: string } } }>).map(
        (w) => w.clientConfig.service,
      ),
    );
    expect(services.length).toBeGreaterThan(10);
    expect(new Set(services.map((s) => `${s.namespace}/${s.name}:${s.port}`))).toEqual(new Set([`${NAMESPACE}/admission-webhook:443`]));
    expect(services.every((s) => s.path.startsWith('/validate-') || s.path.startsWith('/mutate-'))).toBe(true);
    const svc = objects.find((m) => m.kind === 'Service' && m.apiVersion === 'v1' && m.metadata.name === 'admission-webhook');
    const spec = svc?.['spec'] as { selector: Record<string, string>; ports: Array<{ port: number; targetPort: number }> };
    expect(spec.selector).toEqual({ 'serving.knative.dev/service': 'admission' });
    const ksvc = objects.find((m) => isKnativeService(m) && m.metadata.name === 'admission');
    const port = (ksvc?.['spec'] as { template: { spec: { containers: Array<{ ports: Array<{ containerPort: number }> }> } } }).template.spec.containers[0]
      ?.ports[0]?.containerPort;
    // Knative's queue-proxy: TLS on 8112, forwarding to the container's port (docs/adr/0023).
    expect(spec.ports).toEqual([expect.objectContaining({ port: 443, targetPort: 8112 })]);
    expect(port).toBe(8080);
  });

  it('registers exactly the paths the admission function serves', () => {
    const registered = objects
      .filter((m) => m.kind.endsWith('WebhookConfiguration'))
      .flatMap((c) => (c['webhooks'] as Array<{ clientConfig: { service: { path: string } } }>).map((w) => w.clientConfig.service.path));
    expect(registered.sort()).toEqual(WEBHOOKS.map((w) => w.path).sort());
  });

  it('validates the virtualization ModuleConfig on create and update, and no other ModuleConfig', () => {
    const validating = find('ValidatingWebhookConfiguration', 'virtualization-admission');
    const hook = (
      validating?.['webhooks'] as Array<{ rules: Array<{ resources: string[]; operations: string[] }>; matchConditions?: Array<{ expression: string }> }>
    ).find((w) => w.rules.some((r) => r.resources.includes('moduleconfigs')));
    expect(hook?.rules[0]?.operations).toEqual(['CREATE', 'UPDATE']);
    expect(hook?.matchConditions?.map((c) => c.expression)).toEqual(['request.name == "virtualization"']);
  });

  it('routes eventing only to objects the install creates', () => {
    const dangling: string[] = [];
    const expectRef = (from: Manifest, ref: Ref): void => {
      if (find(ref.kind, ref.name, ref.apiVersion) === undefined) dangling.push(`${keyOf(from)} -> ${ref.kind}/${ref.name}`);
    };
    for (const m of objects) {
      const spec = m['spec'] as { broker?: string; subscriber?: { ref: Ref }; sink?: { ref: Ref }; subject?: Ref };
      if (m.kind === 'Trigger') {
        expectRef(m, { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: spec.broker ?? '' });
        if (spec.subscriber) expectRef(m, spec.subscriber.ref);
      }
      if (spec?.sink) expectRef(m, spec.sink.ref);
      if (m.kind === 'SinkBinding' && spec.subject) expectRef(m, spec.subject);
    }
    expect(dangling).toEqual([]);
    expect(objects.filter((m) => m.kind === 'Trigger').map((m) => (m['spec'] as { subscriber: { ref: Ref } }).subscriber.ref.name)).toEqual([
      'pre-delete',
      'pre-delete',
    ]);
  });

  it('scrapes /metrics of every unit through a Service on its pods and serving port, with the scraper token', () => {
    type Endpoint = {
      port: string;
      scheme: string;
      path: string;
      authorization?: { credentials: { name: string; key: string } };
      tlsConfig?: { ca: { secret: { name: string } } };
    };
    const monitors = objects.filter((m) => m.kind === 'ServiceMonitor');
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual(['admission', 'audit', 'controller', 'pre-delete', 'subresources']);
    const problems = monitors.flatMap((monitor) => {
      const name = monitor.metadata.name;
      const spec = monitor['spec'] as { selector: { matchLabels: Record<string, string> }; endpoints: Endpoint[] };
      const services = objects.filter(
        (m) => m.kind === 'Service' && m.apiVersion === 'v1' && Object.entries(spec.selector.matchLabels).every(([k, v]) => m.metadata.labels?.[k] === v),
      );
      const workload = objects.find((m) => podSpecOf(m) !== undefined && m.metadata.name === name);
      const [container] = workload === undefined ? [] : containersOf(workload);
      const servicePort = (services[0]?.['spec'] as { ports: Array<{ name: string; targetPort: number }> } | undefined)?.ports.find(
        (p) => p.name === spec.endpoints[0]?.port,
      );
      const selector = (services[0]?.['spec'] as { selector?: Record<string, string> } | undefined)?.selector;
      const podSelector =
        workload !== undefined && isKnativeService(workload)
          ? { 'serving.knative.dev/service': name }
          : (workload?.['spec'] as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels;
      const tls = ((container as { env?: Array<{ name: string }> } | undefined)?.env ?? []).some((e) => e.name === 'TLS_CERT_FILE');
      const secretVolume = ((podSpecOf(workload ?? ({} as Manifest))?.['volumes'] as Array<{ secret?: { secretName: string } }> | undefined) ?? [])[0]?.secret
        ?.secretName;
      const endpoint = spec.endpoints[0];
      const checks: Array<[string, boolean]> = [
        ['selects exactly one Service', services.length === 1],
        ["the Service selects the unit's pods", JSON.stringify(selector) === JSON.stringify(podSelector)],
        [
          'the port targets the container port',
          servicePort !== undefined && container?.ports?.some((p) => p.containerPort === servicePort.targetPort) === true,
        ],
        ['path /metrics', endpoint?.path === '/metrics'],
        ['https exactly when the unit serves TLS', (endpoint?.scheme === 'https') === tls],
        ["TLS verified with the CA of the unit's serving Secret", !tls || endpoint?.tlsConfig?.ca.secret.name === secretVolume],
        ['the scraper token', endpoint?.authorization?.credentials.name === 'metrics-scraper-token' && endpoint.authorization.credentials.key === 'token'],
      ];
      return checks.filter(([, ok]) => !ok).map(([what]) => `${keyOf(monitor)}: ${what}`);
    });
    expect(problems).toEqual([]);
    const token = find('Secret', 'metrics-scraper-token');
    expect([token?.['type'], token?.metadata.annotations?.['kubernetes.io/service-account.name']]).toEqual([
      'kubernetes.io/service-account-token',
      'metrics-scraper',
    ]);
    expect(find('ClusterRoleBinding', 'd8:virtualization:metrics-reader')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'd8:virtualization:metrics-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'metrics-scraper', namespace: NAMESPACE }],
    });
  });

  it('leaves the pre-delete Job out of the install, so that applying it never deletes anything', () => {
    expect(objects.filter((m) => m.kind === 'Job')).toEqual([]);
  });
});
