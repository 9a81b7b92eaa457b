/**
 * The install against Knative itself (the pinned release's Go modules, through
 * tests/env/knative-modules.sh): its CRDs, and Knative Serving's and Eventing's admission webhooks built
 * from the same modules, running out-of-cluster and called by the apiserver for our Services, Triggers,
 * ApiServerSource and SinkBinding. A control plane
 * of this test's own: the suite's shared one keeps the minimal stand-ins of
 * tests/integration/install/knative-crds, which the other install tests use; this one routes webhook
 * calls to Service endpoints (`--enable-aggregator-routing`), so a selector-less Service with an
 * Endpoints of this machine's address reaches the webhook process.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getTestEnv } from '../../env/index.js';
import { advertiseAddress, startControlPlane, type ControlPlane } from '../../env/control-plane.js';
import { runKubectl, type KubectlResult } from '../../env/kubectl.js';
import { freePort } from '../../env/ports.js';
import { spawnLogged, tailLog, type LoggedProcess } from '../../env/process.js';
import { waitFor } from '../../../shared/testing/wait.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const KNATIVE_DIR = join(REPO, 'knative');
/** Not Knative's: the Prometheus Operator's ServiceMonitor, which knative/monitoring needs too. */
const SERVICE_MONITOR_CRD = join(REPO, 'tests/integration/install/knative-crds/monitoring-servicemonitors.yaml');

let cp: ControlPlane;
let workDir: string;
let knativeDir: string;

interface KnativeService {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly annotations?: Record<string, string> };
  readonly spec: { readonly traffic?: { readonly latestRevision?: boolean }[] };
}

interface EventingObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly spec: Record<string, unknown>;
}

/** A Service of ours, as the install has it but named apart, for probing the webhook. */
const service = (name: string, annotations: Record<string, string> = {}): string =>
  [
    'apiVersion: serving.knative.dev/v1',
    'kind: Service',
    `metadata: {name: ${name}, namespace: default}`,
    'spec:',
    '  template:',
    `    metadata: {annotations: ${JSON.stringify(annotations)}}`,
    '    spec:',
    '      containers:',
    '        - image: dev.local/virtualization-admission',
    '',
  ].join('\n');

/** Knative's two admission webhooks, as their Deployments run them (config/core/deployments/webhook.yaml). */
const WEBHOOKS = {
  serving: { namespace: 'knative-serving', service: 'webhook', metricsDomain: 'knative.dev/internal/serving', env: {} },
  eventing: { namespace: 'knative-eventing', service: 'eventing-webhook', metricsDomain: 'knative.dev/eventing', env: { SINK_BINDING_SELECTION_MODE: 'exclusion' } },
} as const;
type Part = keyof typeof WEBHOOKS;
const webhooks: LoggedProcess[] = [];

/** A minimal valid object each webhook is called for: ready once the apiserver's call is answered. */
const PROBES: Record<Part, string> = {
  serving: service('probe'),
  eventing: [
    'apiVersion: eventing.knative.dev/v1',
    'kind: Trigger',
    'metadata: {name: probe, namespace: default}',
    'spec: {broker: default, subscriber: {uri: "http://probe.default.svc"}}',
    '',
  ].join('\n'),
};

/**
 * One webhook out-of-cluster on free ports: its namespace's config maps, webhook configurations and
 * secret applied first, its Service pointed at this machine; it makes its own certificate and fills
 * the configurations' caBundle.
 */
async function startKnativeWebhook(part: Part): Promise<void> {
  const { namespace, service: name, metricsDomain, env } = WEBHOOKS[part];
  await ok(['apply', '--server-side', '--field-manager=install-test', '-f', join(knativeDir, `${part}-config`)]);
  const port = await freePort();
  const endpoints = [
    'apiVersion: v1',
    'kind: Service',
    `metadata: {name: ${name}, namespace: ${namespace}}`,
    `spec: {ports: [{name: https-webhook, port: 443, targetPort: ${port}}]}`,
    '---',
    'apiVersion: v1',
    'kind: Endpoints',
    `metadata: {name: ${name}, namespace: ${namespace}}`,
    `subsets: [{addresses: [{ip: "${advertiseAddress()}"}], ports: [{name: https-webhook, port: ${port}}]}]`,
    '',
  ].join('\n');
  const r = await kubectl(['apply', '--server-side', '--field-manager=install-test', '-f', '-'], endpoints);
  if (r.code !== 0) throw new Error(`the ${part} webhook Service failed:\n${r.stderr}`);
  const logPath = join(workDir, `knative-${part}-webhook.log`);
  const proc = spawnLogged(`knative-${part}-webhook`, join(knativeDir, `${part}-webhook`), [`--kubeconfig=${cp.state.kubeconfigPath}`], logPath, {
    env: {
      ...process.env,
      ...env,
      SYSTEM_NAMESPACE: namespace,
      POD_NAME: `${name}-test`,
      CONFIG_LOGGING_NAME: 'config-logging',
      CONFIG_OBSERVABILITY_NAME: 'config-observability',
      WEBHOOK_NAME: name,
      WEBHOOK_PORT: String(port),
      METRICS_DOMAIN: metricsDomain,
      METRICS_PROMETHEUS_PORT: String(await freePort()),
      PROFILING_PORT: String(await freePort()),
    },
  });
  webhooks.push(proc);
  await waitFor(
    `Knative ${part} webhook`,
    async () => (await dryRun(PROBES[part])).code === 0,
    { timeoutMs: 180_000, intervalMs: 1_000, abortIf: () => (proc.hasExited() ? `exited; log ${logPath}:\n${tailLog(logPath)}` : undefined) },
  );
}

const kubectl = (args: string[], stdin?: string): Promise<KubectlResult> =>
  runKubectl(cp.state, args, stdin === undefined ? {} : { stdin });

/** Server-side dry run of `kubectl apply -k knative/`, the objects as the apiserver would store them. */
async function installDryRun<T>(): Promise<{ items: T[] }> {
  const r = await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=virtualization-install', '-k', KNATIVE_DIR, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl apply -k knative/ --dry-run=server was refused:\n${r.stderr}`);
  return JSON.parse(r.stdout) as { items: T[] };
}

/** Server-side dry run of one manifest: what the apiserver, the CRD schemas and the webhooks say. */
const dryRun = (yaml: string): Promise<KubectlResult> =>
  kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=install-test', '-f', '-'], yaml);

async function ok(args: string[]): Promise<string> {
  const r = await kubectl(args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .map((f) => join(dir, f));

beforeAll(async () => {
  knativeDir = execFileSync('bash', [join(REPO, 'tests/env/knative-modules.sh')], { encoding: 'utf8' }).trim();
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  workDir = mkdtempSync(join(base, 'virt-knative-crds-'));
  cp = await startControlPlane(getTestEnv().binDir, workDir, { apiServerArgs: ['--enable-aggregator-routing=true'] });
  const crds = [...yamlFiles(join(knativeDir, 'serving')), ...yamlFiles(join(knativeDir, 'eventing')), SERVICE_MONITOR_CRD];
  await ok(['apply', '--server-side', '--field-manager=install-test', ...crds.flatMap((f) => ['-f', f])]);
  await ok(['apply', '--server-side', '--field-manager=install-test', '-k', join(KNATIVE_DIR, 'crds')]);
  await ok(['apply', '--server-side', '--field-manager=install-test', '-f', join(KNATIVE_DIR, 'namespace.yaml')]);
  await ok(['wait', '--for=condition=Established', '--timeout=120s', 'crd', '--all']);
  await startKnativeWebhook('serving');
  await startKnativeWebhook('eventing');
}, 1_800_000);

afterAll(async () => {
  await Promise.all(webhooks.map((w) => w.stop()));
  await cp?.stop();
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
}, 60_000);

describe('the install against Knative', () => {
  it('passes server-side dry-run of `kubectl apply -k knative/` with every object accepted', async () => {
    const rendered = await ok(['kustomize', KNATIVE_DIR]);
    const count = rendered.split(/^---$/m).filter((doc) => /^kind:/m.test(doc)).length;
    const r = await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=virtualization-install', '-k', KNATIVE_DIR]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').filter((l) => l.endsWith('serverside-applied (server dry run)'))).toHaveLength(count);
  }, 120_000);

  it("refuses a Service whose container port is not a number, by Knative's schema, naming the field", async () => {
    const broken = [
      'apiVersion: serving.knative.dev/v1',
      'kind: Service',
      'metadata: {name: broken, namespace: default}',
      'spec:',
      '  template:',
      '    spec:',
      '      containers:',
      '        - image: dev.local/virtualization-admission',
      '          ports: [{containerPort: http}]',
      '',
    ].join('\n');
    const r = await dryRun(broken);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('serving.knative.dev/v1, Kind=Service');
    expect(r.stderr).toMatch(/\.spec\.template\.spec\.containers\[0\]\.ports\[.*\]\.containerPort: expected numeric/);
  });

  it("is called by the apiserver for each of the install's Services: Knative's defaulting marked every one", async () => {
    const services = (await installDryRun<KnativeService>()).items.filter((o) => o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1');
    expect(services.length).toBeGreaterThanOrEqual(4);
    for (const svc of services) {
      // Both set only by Knative's defaulting webhook: who created it, and the default route.
      expect([svc.metadata.name, svc.metadata.annotations?.['serving.knative.dev/creator']]).toEqual([svc.metadata.name, 'admin']);
      expect([svc.metadata.name, svc.spec.traffic?.[0]?.latestRevision]).toEqual([svc.metadata.name, true]);
    }
  }, 120_000);

  it("refuses a Service with a negative min-scale, by Knative's webhook (a schema cannot see annotations)", async () => {
    const r = await dryRun(service('broken-scale', { 'autoscaling.knative.dev/min-scale': '-1' }),
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('admission webhook "validation.webhook.serving.knative.dev" denied the request');
    expect(r.stderr).toContain('autoscaling.knative.dev/min-scale');
  });

  it("is called by the apiserver for the install's Triggers, ApiServerSource and SinkBinding: Knative Eventing's webhook accepted and defaulted them", async () => {
    const { items } = await installDryRun<EventingObject>();
    const triggers = items.filter((o) => o.kind === 'Trigger' && o.apiVersion === 'eventing.knative.dev/v1');
    expect(triggers.length).toBeGreaterThanOrEqual(2);
    // Set only by the Trigger's defaulting: the label naming its broker.
    for (const t of triggers) expect([t.metadata.name, t.metadata.labels?.['eventing.knative.dev/broker']]).toEqual([t.metadata.name, t.spec['broker']]);
    expect(items.filter((o) => o.kind === 'ApiServerSource')).toHaveLength(1);
    const bindings = items.filter((o) => o.kind === 'SinkBinding');
    expect(bindings).toHaveLength(1);
    // The SinkBinding's subject namespace, left out by the install, defaulted to its own.
    for (const b of bindings) expect((b.spec['subject'] as { namespace?: string }).namespace).toBe(b.metadata.namespace);
  }, 120_000);

  it("refuses a Trigger whose filter names an invalid attribute, by Knative Eventing's webhook", async () => {
    const broken = [
      'apiVersion: eventing.knative.dev/v1',
      'kind: Trigger',
      'metadata: {name: broken-filter, namespace: default}',
      'spec: {broker: default, filter: {attributes: {Bad_Key: x}}, subscriber: {uri: "http://probe.default.svc"}}',
      '',
    ].join('\n');
    const r = await dryRun(broken);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('admission webhook "validation.webhook.eventing.knative.dev" denied the request');
    expect(r.stderr).toContain('Bad_Key');
  });

  it("pins one Knative release: tests/env/knative-version names the modules tested here and skaffold.yaml's remote part", () => {
    const version = readFileSync(join(knativeDir, 'VERSION'), 'utf8').trim();
    expect(version).toBe(readFileSync(join(REPO, 'tests/env/knative-version'), 'utf8').trim());
    const releases = [...readFileSync(join(REPO, 'skaffold.yaml'), 'utf8').matchAll(/\/knative\/[a-z-]+\/releases\/download\/knative-v([0-9.]+)\//g)];
    expect(releases.length).toBeGreaterThan(0);
    expect(new Set(releases.map((m) => m[1]))).toEqual(new Set([version]));
  });
});
