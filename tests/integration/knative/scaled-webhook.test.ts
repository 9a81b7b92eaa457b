/**
 * System test of Knative-scaled webhooks (docs/adr/0023): the real kube-apiserver calls the admission
 * function through Knative Serving's own queue-proxy, on its TLS port, as the install's
 * `admission-webhook` Service routes it (knative/functions/admission.yaml); the queue-proxy's stats
 * endpoint, the one Knative's autoscaler scrapes, shows the admission requests and their concurrency;
 * and a second revision pod added to the Service's endpoints mid-load takes calls with no write
 * failing. The apiserver is a second one on the run's etcd under a key prefix of its own, with
 * `--enable-aggregator-routing` so that it calls Service endpoints (the EndpointSlice this test
 * writes, as the endpoints controller would for the pods) rather than a ClusterIP.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, loadAll } from 'js-yaml';
import { waitFor } from '../../../shared/testing/wait.js';
import { installDeckhouseCrds, kubectl } from '../../env/index.js';
import { NAMESPACE, startRevisionEnv, type RevisionEnv } from './revision-env.js';
import { QUEUE_TLS_PORT, scrapeStat, type RevisionPod, type Stat } from './revision-pod.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const LABEL = 'scaled-webhook-test';

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: { ports?: Array<{ name: string; port: number; targetPort: number | string }> };
  webhooks?: Array<{ name: string; clientConfig: { service?: { name: string; namespace: string; path: string; port?: number }; caBundle?: string }; rules: Array<{ resources: string[] }>; namespaceSelector?: unknown }>;
}

let env: RevisionEnv;
let testNs = '';

/** The install's `admission-webhook` Service, as knative/functions/admission.yaml ships it. */
const installService = (): Manifest =>
  (loadAll(readFileSync(join(REPO, 'knative/functions/admission.yaml'), 'utf8')) as Manifest[]).find((m) => m.kind === 'Service' && m.metadata.name === 'admission-webhook') as Manifest;

/** The install's VirtualMachine webhooks, unchanged but for the caBundle and a selector of this test's namespace. */
function vmWebhookConfigurations(caBundle: string): Manifest[] {
  return ['mutating.yaml', 'validating.yaml'].map((f) => {
    const config = load(readFileSync(join(REPO, 'knative/webhooks', f), 'utf8')) as Manifest;
    const webhooks = (config.webhooks ?? [])
      .filter((w) => w.rules.some((r) => r.resources.includes('virtualmachines')))
      .map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle }, namespaceSelector: { matchLabels: { [LABEL]: 'true' } } }));
    return { ...config, webhooks };
  });
}

const vm = (name: string, refs: string): Record<string, unknown> => ({
  apiVersion: 'virtualization.deckhouse.io/v1alpha2',
  kind: 'VirtualMachine',
  metadata: { name, namespace: testNs },
  spec: { cpu: { cores: 2 }, memory: { size: '2Gi' }, blockDeviceRefs: JSON.parse(refs) as unknown, networks: [{ type: 'Main' }] },
});

beforeAll(async () => {
  env = await startRevisionEnv('scaled-webhook', 'admission-webhook', { functionEnv: { LOOKUP_CACHE_TTL_MS: '1000', LOOKUP_CACHE_STALE_MS: '1000', LOG_LEVEL: 'warn' } });
  const { ok, id } = env;
  await ok(['apply', '--server-side', '--field-manager=scaled-webhook-test', '-k', join(REPO, 'knative/crds')]);
  await installDeckhouseCrds(env.apiserver.kubeconfigPath);
  await ok(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  testNs = `kscale-${id}`;
  await ok(['create', 'namespace', NAMESPACE]);
  await ok(['create', 'namespace', testNs]);
  await ok(['label', 'namespace', testNs, `${LABEL}=true`]);
  await ok(['apply', '-f', '-'], JSON.stringify({ ...installService(), metadata: { name: 'admission-webhook', namespace: NAMESPACE }, spec: { ...installService().spec, selector: undefined } }));
  await ok(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'virtualization.deckhouse.io/v1alpha2',
      kind: 'VirtualMachineClass',
      metadata: { name: 'generic', annotations: { 'virtualmachineclass.virtualization.deckhouse.io/is-default-class': 'true' } },
      spec: { cpu: { type: 'Model', model: 'Nehalem' }, sizingPolicies: [{ cores: { min: 1, max: 4 }, coreFractions: [10, 50, 100], defaultCoreFraction: 10 }] },
    }),
  );
  await ok(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'deckhouse.io/v1alpha1',
      kind: 'ModuleConfig',
      metadata: { name: 'virtualization' },
      spec: { enabled: true, version: 1, settings: { dvcr: { storage: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { size: '50Gi' } } }, virtualMachineCIDRs: ['10.66.0.0/16'] } },
    }),
  );
  await env.setEndpoints('admission-webhook', [await env.startPod(0)]);
  await ok(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: vmWebhookConfigurations(env.ca.toString('base64')) }));
  const probe = JSON.stringify(vm('probe', '[{"kind":"VirtualDisk","name":"a"},{"kind":"VirtualDisk","name":"a"}]'));
  await waitFor('the webhooks to be called through the queue-proxy', async () => {
    const r = await kubectl(['apply', '--dry-run=server', '-f', '-'], { kubeconfigPath: env.apiserver.kubeconfigPath, stdin: probe });
    return r.stderr.includes('denied the request');
  });
}, 600_000);

afterAll(async () => {
  await env?.stop();
}, 60_000);

describe('admission webhooks through Knative Serving’s queue-proxy', () => {
  it("routes the install's admission-webhook Service to the queue-proxy's TLS port, not the function's own", () => {
    expect(installService().spec?.ports).toEqual([{ name: 'https', port: 443, targetPort: QUEUE_TLS_PORT }]);
  });

  it("passes our function's refusal through, naming every violation, and Knative counts the request", async () => {
    const before = await scrapeStat(env.pods[0]);
    expect(before.podName).toBe(env.pods[0].name);
    const r = await kubectl(['apply', '--dry-run=server', '-f', '-'], {
      kubeconfigPath: env.apiserver.kubeconfigPath,
      stdin: JSON.stringify(vm('bad', '[{"kind":"VirtualDisk","name":"root","bootOrder":1},{"kind":"VirtualDisk","name":"root","bootOrder":1}]')),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('admission webhook "vm.virtualization-controller.validate.d8-virtualization" denied the request: spec.blockDeviceRefs[1]: VirtualDisk/root is already listed at spec.blockDeviceRefs[0]');
    await waitFor('the request in the queue-proxy stats', async () => (await scrapeStat(env.pods[0])).requestCount > 0, { timeoutMs: 30_000, intervalMs: 250 });
  });

  it('shows the concurrency of admission requests to the autoscaler, and takes a second pod mid-load with no failed write', async () => {
    const client = env.apiserver.kubeConfig().makeApiClient(CustomObjectsApi);
    let stopLoad = false;
    let succeeded = 0;
    const failures: string[] = [];
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !stopLoad; i++) {
        try {
          const body = vm(`load-${w}-${i}`, '[{"kind":"VirtualDisk","name":"root"}]');
          const created = (await client.createNamespacedCustomObject({ group: 'virtualization.deckhouse.io', version: 'v1alpha2', namespace: testNs, plural: 'virtualmachines', body, dryRun: 'All' })) as {
            spec: { virtualMachineClassName?: string };
          };
          // The mutating webhook's default: proof that the call went through and was answered.
          if (created.spec.virtualMachineClassName === 'generic') succeeded++;
          else failures.push(`load-${w}-${i}: not defaulted: ${JSON.stringify(created.spec)}`);
        } catch (err: unknown) {
          failures.push(`load-${w}-${i}: ${(err instanceof Error ? err.message : String(err)).slice(0, 400)}`);
        }
      }
    };
    const samples: Stat[] = [];
    const sample = async (pod: RevisionPod): Promise<Stat> => {
      const s = await scrapeStat(pod);
      samples.push(s);
      return s;
    };
    // Six writers first; then the load triples, as it would before the autoscaler adds a pod. The
    // apiserver keeps its HTTP/1.1 connections to the first pod alive and reuses them, so the second
    // pod gets the calls of the new connections the added load opens (each resolved to a random
    // endpoint), not a share of the old ones.
    const writers = Array.from({ length: 6 }, (_, w) => worker(w));
    try {
      await waitFor('concurrent admission requests at the first pod', async () => (await sample(env.pods[0])).averageConcurrentRequests >= 1, { timeoutMs: 60_000, intervalMs: 500 });
      const second = await env.startPod(1);
      await env.setEndpoints('admission-webhook', env.pods);
      writers.push(...Array.from({ length: 12 }, (_, w) => worker(6 + w)));
      // At least 10 requests in one 1 s period: webhook calls, not the few readiness checks above.
      await waitFor('admission calls at the second pod', async () => (await sample(second)).requestCount >= 10, {
        timeoutMs: 90_000,
        intervalMs: 500,
        abortIf: () => second.exited(),
      });
      await waitFor('calls at both pods in one period', async () => (await Promise.all(env.pods.map(sample))).every((st) => st.requestCount >= 10), {
        timeoutMs: 30_000,
        intervalMs: 500,
      });
    } finally {
      stopLoad = true;
      await Promise.all(writers);
    }
    const perPod = new Map(env.pods.map((p) => [p.name, samples.filter((s) => s.podName === p.name)]));
    const peak = (name: string): number => Math.max(...(perPod.get(name) ?? []).map((s) => s.averageConcurrentRequests));
    process.stderr.write(
      `[scaled-webhook] ${succeeded} admitted writes, ${failures.length} failed; peak average concurrency per pod (1 s periods): ` +
        env.pods.map((p) => `${p.name}=${peak(p.name).toFixed(2)}`).join(', ') +
        `; samples ${JSON.stringify(samples.map((s) => [s.podName.slice(-6), s.averageConcurrentRequests.toFixed(2), s.requestCount]))}` +
        '\n',
    );
    expect(failures).toEqual([]);
    expect(succeeded).toBeGreaterThan(0);
    for (const p of env.pods) expect(peak(p.name)).toBeGreaterThanOrEqual(0.5);
  }, 300_000);
});
