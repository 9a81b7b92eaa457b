/**
 * The install against Knative itself (the pinned release's Go modules, through
 * tests/env/knative-modules.sh): its CRDs, and Knative Serving's admission webhook built from the same
 * module, running out-of-cluster and called by the apiserver for every Knative Service. A control plane
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
import { spawnLogged, tailLog, waitUntil, type LoggedProcess } from '../../env/process.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const KNATIVE_DIR = join(REPO, 'knative');
/** Not Knative's: the Prometheus Operator's ServiceMonitor, which knative/monitoring needs too. */
const SERVICE_MONITOR_CRD = join(REPO, 'tests/integration/install/knative-crds/monitoring-servicemonitors.yaml');

let cp: ControlPlane;
let workDir: string;
let knativeDir: string;
let webhook: LoggedProcess | undefined;

interface KnativeService {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly annotations?: Record<string, string> };
  readonly spec: { readonly traffic?: { readonly latestRevision?: boolean }[] };
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

/** Knative Serving's webhook as its Deployment runs it, out-of-cluster, on free ports. */
async function startKnativeWebhook(): Promise<void> {
  const port = await freePort();
  const endpoints = [
    'apiVersion: v1',
    'kind: Service',
    'metadata: {name: webhook, namespace: knative-serving}',
    'spec: {ports: [{name: https-webhook, port: 443, targetPort: ' + String(port) + '}]}',
    '---',
    'apiVersion: v1',
    'kind: Endpoints',
    'metadata: {name: webhook, namespace: knative-serving}',
    `subsets: [{addresses: [{ip: "${advertiseAddress()}"}], ports: [{name: https-webhook, port: ${port}}]}]`,
    '',
  ].join('\n');
  const r = await kubectl(['apply', '--server-side', '--field-manager=install-test', '-f', '-'], endpoints);
  if (r.code !== 0) throw new Error(`the webhook Service failed:\n${r.stderr}`);
  const logPath = join(workDir, 'knative-webhook.log');
  webhook = spawnLogged('knative-webhook', join(knativeDir, 'serving-webhook'), [`--kubeconfig=${cp.state.kubeconfigPath}`], logPath, {
    env: {
      ...process.env,
      SYSTEM_NAMESPACE: 'knative-serving',
      POD_NAME: 'webhook-test',
      CONFIG_LOGGING_NAME: 'config-logging',
      CONFIG_OBSERVABILITY_NAME: 'config-observability',
      WEBHOOK_NAME: 'webhook',
      WEBHOOK_PORT: String(port),
      METRICS_DOMAIN: 'knative.dev/internal/serving',
      METRICS_PROMETHEUS_PORT: String(await freePort()),
      PROFILING_PORT: String(await freePort()),
    },
  });
  const proc = webhook;
  // Ready once the apiserver's call for a Service reaches it and it answers (it fills the webhook
  // configurations' caBundle with the certificate it made itself).
  await waitUntil(
    'Knative Serving webhook',
    async () => (await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=install-test', '-f', '-'], service('probe'))).code === 0,
    { timeoutMs: 180_000, intervalMs: 1_000, abortIf: () => (proc.hasExited() ? `exited; log ${logPath}:\n${tailLog(logPath)}` : undefined) },
  );
}

const kubectl = (args: string[], stdin?: string): Promise<KubectlResult> =>
  runKubectl(cp.state, args, stdin === undefined ? {} : { stdin });

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
  await ok(['apply', '--server-side', '--field-manager=install-test', '-f', join(knativeDir, 'serving-config')]);
  await startKnativeWebhook();
}, 1_800_000);

afterAll(async () => {
  await webhook?.stop();
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
    const r = await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=install-test', '-f', '-'], broken);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('serving.knative.dev/v1, Kind=Service');
    expect(r.stderr).toMatch(/\.spec\.template\.spec\.containers\[0\]\.ports\[.*\]\.containerPort: expected numeric/);
  });

  it("is called by the apiserver for each of the install's Services: Knative's defaulting marked every one", async () => {
    const r = await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=virtualization-install', '-k', KNATIVE_DIR, '-o', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { items: KnativeService[] };
    const services = out.items.filter((o) => o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1');
    expect(services.length).toBeGreaterThanOrEqual(4);
    for (const svc of services) {
      // Both set only by Knative's defaulting webhook: who created it, and the default route.
      expect([svc.metadata.name, svc.metadata.annotations?.['serving.knative.dev/creator']]).toEqual([svc.metadata.name, 'admin']);
      expect([svc.metadata.name, svc.spec.traffic?.[0]?.latestRevision]).toEqual([svc.metadata.name, true]);
    }
  }, 120_000);

  it("refuses a Service with a negative min-scale, by Knative's webhook (a schema cannot see annotations)", async () => {
    const r = await kubectl(
      ['apply', '--server-side', '--dry-run=server', '--field-manager=install-test', '-f', '-'],
      service('broken-scale', { 'autoscaling.knative.dev/min-scale': '-1' }),
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('admission webhook "validation.webhook.serving.knative.dev" denied the request');
    expect(r.stderr).toContain('autoscaling.knative.dev/min-scale');
  });

  it("pins one Knative release: skaffold.yaml installs the version whose CRDs are tested here", () => {
    const version = readFileSync(join(knativeDir, 'VERSION'), 'utf8').trim();
    const releases = [...readFileSync(join(REPO, 'skaffold.yaml'), 'utf8').matchAll(/\/knative\/[a-z-]+\/releases\/download\/knative-v([0-9.]+)\//g)];
    expect(releases.length).toBeGreaterThan(0);
    expect(new Set(releases.map((m) => m[1]))).toEqual(new Set([version]));
  });
});
