/**
 * The install's NetworkPolicies (knative/network/) against the objects they must select, since no
 * policy-enforcing CNI runs here: every pod of ours on the pod network is selected by exactly one
 * policy, every policy selects some pod of ours, the ports the apiserver and Prometheus call are
 * open to them (from what the webhook, APIService and metrics Services target), the Knative data
 * plane reaches the Knative Services' queue-proxy, and every pod may reach DNS and the apiserver.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { KNATIVE_DIR, installAndHooks, isKnativeService, keyOf, kustomize, podSpecOf, type Manifest } from './manifests.js';

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}
interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string };
}
interface Rule {
  from?: Peer[];
  to?: Peer[];
  ports?: Array<{ port?: number | string; protocol?: string }>;
}
interface PolicySpec {
  podSelector: LabelSelector;
  policyTypes?: string[];
  ingress?: Rule[];
  egress?: Rule[];
}

/** Kubernetes label-selector semantics (an empty selector selects everything). */
function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  const exact = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return (
    exact &&
    (selector.matchExpressions ?? []).every((e) => {
      const has = Object.hasOwn(labels, e.key);
      switch (e.operator) {
        case 'In':
          return has && (e.values ?? []).includes(labels[e.key] ?? '');
        case 'NotIn':
          return !has || !(e.values ?? []).includes(labels[e.key] ?? '');
        case 'Exists':
          return has;
        case 'DoesNotExist':
          return !has;
      }
    })
  );
}

const MODULE_NAMESPACE = 'd8-virtualization';
/** Pods on the host network, where NetworkPolicy does not apply (docs/threat-model.md says what protects them). */
const HOST_NETWORK = ['DaemonSet/d8-virtualization/dra', 'DaemonSet/d8-virtualization/route-forge'];
/** The queue-proxy ports Knative's activator and gateway send a Knative Service's requests to. */
const QUEUE_PROXY_PORTS = [8012, 8112];

let objects: Manifest[] = [];
let policies: Array<{ key: string; spec: PolicySpec }> = [];
/** Every pod template of ours in the module namespace, with the labels its pods carry. */
let pods: Array<{ key: string; labels: Record<string, string>; hostNetwork: boolean; knative: boolean }> = [];

/**
 * The ports KubeVirt's webhook Services get from the configuration object's customizeComponents
 * (knative/kubevirt/config/): virt-operator creates those Services, so they are not in the install;
 * the apiserver calls the rewriter's webhook proxy on them.
 */
let kubeVirtWebhookPorts: number[] = [];

beforeAll(async () => {
  const [kubeVirt] = await kustomize(`${KNATIVE_DIR}kubevirt/config`);
  const patches = (kubeVirt?.['spec'] as { customizeComponents?: { patches?: Array<{ resourceType: string; type: string; patch: string }> } } | undefined)
    ?.customizeComponents?.patches;
  kubeVirtWebhookPorts = [
    ...new Set(
      (patches ?? [])
        .filter((p) => p.resourceType === 'Service' && p.type === 'strategic')
        .flatMap((p) => (JSON.parse(p.patch) as { spec: { ports: Array<{ port: number }> } }).spec.ports.map((port) => port.port)),
    ),
  ];

  objects = await installAndHooks();
  policies = objects.filter((m) => m.kind === 'NetworkPolicy').map((m) => ({ key: keyOf(m), spec: m['spec'] as PolicySpec }));
  pods = objects
    .filter((m) => podSpecOf(m) !== undefined && m.metadata.namespace === MODULE_NAMESPACE)
    .map((m) => {
      const template = (m['spec'] as { template: { metadata?: { labels?: Record<string, string> } } }).template;
      const labels = { ...(template.metadata?.labels ?? {}) };
      // Knative Serving labels every revision's pods with their Service's name.
      if (isKnativeService(m)) labels['serving.knative.dev/service'] = m.metadata.name;
      return { key: keyOf(m), labels, hostNetwork: podSpecOf(m)?.['hostNetwork'] === true, knative: isKnativeService(m) };
    });
});

const policiesFor = (labels: Record<string, string>): Array<{ key: string; spec: PolicySpec }> => policies.filter((p) => selects(p.spec.podSelector, labels));
const ingressAllows = (spec: PolicySpec, port: number, from: (peers: Peer[] | undefined) => boolean): boolean =>
  (spec.ingress ?? []).some((r) => from(r.from) && (r.ports === undefined || r.ports.some((p) => p.port === port)));
const anySource = (peers: Peer[] | undefined): boolean => peers === undefined || peers.length === 0;
const fromNamespace =
  (ns: string) =>
  (peers: Peer[] | undefined): boolean =>
    anySource(peers) ||
    (peers ?? []).some(
      (p) => p.podSelector === undefined && p.namespaceSelector !== undefined && selects(p.namespaceSelector, { 'kubernetes.io/metadata.name': ns }),
    );

/** The pod ports a Service of the install sends to, and the labels of the pods of ours it selects (one entry per pod template). */
function servicesTargeting(name: (m: Manifest) => boolean): Array<{ key: string; pods: Array<Record<string, string>>; targetPorts: number[] }> {
  return objects
    .filter((m) => m.kind === 'Service' && m.apiVersion === 'v1' && name(m))
    .map((m) => {
      const spec = m['spec'] as { selector: Record<string, string>; ports: Array<{ port: number; targetPort?: number }> };
      const selected = pods.filter((p) => selects({ matchLabels: spec.selector }, p.labels)).map((p) => p.labels);
      return { key: keyOf(m), pods: selected, targetPorts: spec.ports.map((p) => p.targetPort ?? p.port) };
    });
}

/** `service:port` for each target port some selected pod's policies keep closed to `from` (or that selects no pod at all). */
function closedTargets(services: ReturnType<typeof servicesTargeting>, from: (peers: Peer[] | undefined) => boolean): string[] {
  return services.flatMap((s) =>
    s.pods.length === 0
      ? [`${s.key}: selects no pod of ours`]
      : s.targetPorts
          .filter((port) => s.pods.some((labels) => !policiesFor(labels).some((x) => ingressAllows(x.spec, port, from))))
          .map((port) => `${s.key}:${port}`),
  );
}

/** The namespaces an ingress rule may name: Knative's data plane (activator, gateway) and Prometheus. */
const INGRESS_NAMESPACES = ['knative-serving', 'kourier-system', 'd8-monitoring'];

/**
 * What lets more in than the install means to: a peer that is not exactly one namespace of
 * INGRESS_NAMESPACES (by name, pods in it optionally narrowed), or a rule open to any source on a
 * port other than the apiserver-facing ones.
 */
function ingressPeersTooOpen(key: string, spec: PolicySpec, apiserverPorts: ReadonlySet<number>): string[] {
  return (spec.ingress ?? []).flatMap((rule, i) => {
    const where = `${key} ingress[${i}]`;
    if (anySource(rule.from)) {
      if (rule.ports === undefined || rule.ports.length === 0) return [`${where}: any source on every port`];
      const others = rule.ports.map((p) => Number(p.port)).filter((port) => !apiserverPorts.has(port));
      return others.length === 0 ? [] : [`${where}: any source on ports ${others.join(', ')}, not only the apiserver-facing ${[...apiserverPorts].join(', ')}`];
    }
    return (rule.from ?? [])
      .filter((peer) => {
        const labels = peer.namespaceSelector?.matchLabels ?? {};
        const named = Object.keys(labels).length === 1 && peer.namespaceSelector?.matchExpressions === undefined;
        return peer.ipBlock !== undefined || !named || !INGRESS_NAMESPACES.includes(labels['kubernetes.io/metadata.name'] ?? '');
      })
      .map((peer) => `${where}: peer ${JSON.stringify(peer)} is not one named namespace of INGRESS_NAMESPACES`);
  });
}

describe('the NetworkPolicies of the install', () => {
  it('select every pod of ours on the pod network exactly once, and only the host-network DaemonSets go without', () => {
    expect(pods.length).toBeGreaterThanOrEqual(6);
    const selection = pods.map((p) => [p.key, policiesFor(p.labels).map((x) => x.key)] as const);
    expect(selection.filter(([key, by]) => !HOST_NETWORK.includes(key) && by.length !== 1)).toEqual([]);
    expect(pods.filter((p) => p.hostNetwork).map((p) => p.key)).toEqual(HOST_NETWORK);
    expect(selection.filter(([key, by]) => HOST_NETWORK.includes(key) && by.length > 0)).toEqual([]);
  });

  it('each select some pod of ours, isolate both directions, and never select the whole namespace', () => {
    expect(policies.length).toBeGreaterThan(0);
    for (const p of policies) {
      expect([p.key, pods.some((pod) => selects(p.spec.podSelector, pod.labels))]).toEqual([p.key, true]);
      expect([p.key, [...(p.spec.policyTypes ?? [])].sort()]).toEqual([p.key, ['Egress', 'Ingress']]);
      expect([p.key, Object.keys(p.spec.podSelector.matchLabels ?? {}).length]).toEqual([p.key, 1]);
    }
  });

  it('let the Knative data plane (activator, gateway) reach every Knative Service on the queue-proxy ports', () => {
    const closed = pods
      .filter((p) => p.knative)
      .flatMap((p) =>
        ['knative-serving', 'kourier-system'].flatMap((ns) =>
          QUEUE_PROXY_PORTS.filter((port) => !policiesFor(p.labels).some((x) => ingressAllows(x.spec, port, fromNamespace(ns)))).map(
            (port) => `${p.key} ${ns}:${port}`,
          ),
        ),
      );
    expect(closed).toEqual([]);
  });

  it("let the apiserver (host network, any source) reach the webhook and aggregated API Services' pods on their target ports", () => {
    const apiserverFacing = servicesTargeting((m) => !(m.metadata.labels?.['app.kubernetes.io/component'] === 'metrics'));
    expect(apiserverFacing.map((s) => s.key).sort()).toEqual(['Service/d8-virtualization/admission-webhook', 'Service/d8-virtualization/subresources-api']);
    const closed = closedTargets(apiserverFacing, anySource);
    expect(closed).toEqual([]);
  });

  it('let Prometheus (d8-monitoring) reach every metrics Service target', () => {
    const metrics = servicesTargeting((m) => m.metadata.labels?.['app.kubernetes.io/component'] === 'metrics');
    expect(metrics.length).toBeGreaterThanOrEqual(5);
    const closed = closedTargets(metrics, fromNamespace('d8-monitoring'));
    expect(closed).toEqual([]);
  });

  it("let nobody else in: each ingress peer is one named namespace of the data plane or Prometheus, and any source only on the apiserver-facing Services' target ports", () => {
    const apiserverPorts = new Set([
      ...servicesTargeting((m) => !(m.metadata.labels?.['app.kubernetes.io/component'] === 'metrics')).flatMap((s) => s.targetPorts),
      ...kubeVirtWebhookPorts,
    ]);
    expect([...apiserverPorts].sort((a, b) => a - b)).toEqual([8112, 8443, 24192]);
    const tooOpen = policies.flatMap((p) => ingressPeersTooOpen(p.key, p.spec, apiserverPorts));
    expect(tooOpen).toEqual([]);
    // The check itself, on rules that let too much in.
    const broken: PolicySpec = {
      podSelector: { matchLabels: { a: 'b' } },
      ingress: [
        { from: [{ namespaceSelector: {} }], ports: [{ port: 8012 }] },
        { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'tenant' } } }] },
        { from: [{ ipBlock: { cidr: '0.0.0.0/0' } }] },
        { ports: [{ port: 8012 }] },
        {},
      ],
    };
    expect(ingressPeersTooOpen('broken', broken, apiserverPorts)).toEqual([
      'broken ingress[0]: peer {"namespaceSelector":{}} is not one named namespace of INGRESS_NAMESPACES',
      'broken ingress[1]: peer {"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"tenant"}}} is not one named namespace of INGRESS_NAMESPACES',
      'broken ingress[2]: peer {"ipBlock":{"cidr":"0.0.0.0/0"}} is not one named namespace of INGRESS_NAMESPACES',
      'broken ingress[3]: any source on ports 8012, not only the apiserver-facing 8112, 8443, 24192',
      'broken ingress[4]: any source on every port',
    ]);
  });

  it('let every selected pod resolve names (kube-dns) and reach the apiserver (443 and 6443)', () => {
    const egressTo = (spec: PolicySpec, port: number, to: (peers: Peer[] | undefined) => boolean): boolean =>
      (spec.egress ?? []).some((r) => to(r.to) && (r.ports === undefined || r.ports.some((p) => p.port === port)));
    const dns = (peers: Peer[] | undefined): boolean =>
      anySource(peers) ||
      (peers ?? []).some(
        (p) =>
          p.namespaceSelector !== undefined &&
          selects(p.namespaceSelector, { 'kubernetes.io/metadata.name': 'kube-system' }) &&
          (p.podSelector === undefined || selects(p.podSelector, { 'k8s-app': 'kube-dns' })),
      );
    const missing = policies.flatMap((p) => [
      ...(egressTo(p.spec, 53, dns) ? [] : [`${p.key} dns`]),
      ...[443, 6443].filter((port) => !egressTo(p.spec, port, anySource)).map((port) => `${p.key} apiserver:${port}`),
    ]);
    expect(missing).toEqual([]);
  });

  it('match labels as the apiserver does (the matcher the checks above rely on)', () => {
    expect(selects({ matchLabels: { a: '1' } }, { a: '1', b: '2' })).toBe(true);
    expect(selects({ matchLabels: { a: '1' } }, { a: '2' })).toBe(false);
    expect(selects({}, { any: 'thing' })).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '3'] }] }, { a: '3' })).toBe(true);
    expect(selects({ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, { a: '3' })).toBe(false);
  });
});
