/**
 * Knative Serving's own autoscaler (built from the pinned module, tests/env/knative-modules.sh),
 * out-of-cluster, scales a revision from our queue-proxy's stats (docs/adr/0023, "Knative's autoscaler
 * out-of-cluster"). It runs in a network namespace of its own (its stats server binds :8080) with the
 * apiserver bridged in, reconciles a PodAutoscaler of a revision whose one pod is a revision "pod"
 * (revision-pod.ts: Knative's queue-proxy in front of a recorder that holds upgraded streams open),
 * scrapes that pod's queue-proxy on :9090 directly (the Pod object this test writes names its address),
 * and scales the revision's Deployment through its `/scale` subresource. What Knative's controller and
 * kubelet would do, the test does: it writes the Pod object and its status, the Deployment, the
 * PodAutoscaler (the Revision reconciler's), and the ServerlessService's status.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../../shared/testing/wait.js';
import { tailLog, type LoggedProcess } from '../../env/process.js';
import { NAMESPACE, startRevisionEnv, type RevisionEnv } from './revision-env.js';
import { QUEUE_TLS_PORT, scrapeStat, type RevisionPod } from './revision-pod.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const REVISION = 'subresources-00001';

let env: RevisionEnv;
let knativeDir: string;
let pod: RevisionPod;
let autoscaler: LoggedProcess;
const streams: TLSSocket[] = [];

const json = (o: unknown): string => JSON.stringify(o);
const replicas = async (revision = REVISION): Promise<number> => Number(await env.ok(['-n', NAMESPACE, 'get', 'deployment', `${revision}-deployment`, '-o', 'jsonpath={.spec.replicas}']));
const autoscalerGone = (): string | undefined => (autoscaler.hasExited() ? `the autoscaler exited; log ${autoscaler.logPath}:\n${tailLog(autoscaler.logPath)}` : undefined);

/** An upgraded stream held open through the pod's queue-proxy: one concurrent request while it lasts. */
async function openStream(): Promise<void> {
  const socket = connect({ host: pod.ip, port: QUEUE_TLS_PORT, ca: env.ca, servername: env.serviceHost, ALPNProtocols: ['http/1.1'] });
  streams.push(socket);
  let got = '';
  socket.on('data', (b: Buffer) => (got += b.toString('latin1')));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  socket.write(`GET /hold HTTP/1.1\r\nHost: ${env.serviceHost}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`);
  await waitFor('the stream upgraded', () => Promise.resolve(got.startsWith('HTTP/1.1 101') ? true : undefined), { timeoutMs: 15_000 });
}

/**
 * What Knative's Revision reconciler, controller and kubelet would make of a revision with one pod at
 * `ip`: its Deployment (no controller runs: only its /scale is read and written), the Pod Running and
 * Ready at that address, its PodAutoscaler (target 1 concurrent request, max-scale 3), and its
 * ServerlessService (which the autoscaler creates) made ready with its private Service.
 */
async function declareRevision(revision: string, podName: string, ip: string): Promise<void> {
  const { ok } = env;
  await ok(
    ['apply', '-f', '-'],
    json({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `${revision}-deployment`, namespace: NAMESPACE },
      spec: { replicas: 1, selector: { matchLabels: { 'serving.knative.dev/revision': revision } }, template: { metadata: { labels: { 'serving.knative.dev/revision': revision } }, spec: { containers: [{ name: 'subresources', image: 'dev.local/virtualization-subresources' }] } } },
    }),
  );
  const labels = { 'serving.knative.dev/revision': revision, 'serving.knative.dev/revisionUID': `uid-${revision}`, 'serving.knative.dev/service': 'subresources', 'serving.knative.dev/configuration': 'subresources' };
  await ok(['apply', '-f', '-'], json({ apiVersion: 'v1', kind: 'Pod', metadata: { name: podName, namespace: NAMESPACE, labels }, spec: { nodeName: 'kn-node', containers: [{ name: 'subresources', image: 'dev.local/virtualization-subresources' }] } }));
  const now = new Date(Date.now() - 120_000).toISOString();
  await ok(['-n', NAMESPACE, 'patch', 'pod', podName, '--subresource=status', '--type=merge', '-p', json({ status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], startTime: now, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] } })]);
  // The Revision reconciler's PodAutoscaler for this revision: a target of 1 concurrent request.
  await ok(
    ['apply', '-f', '-'],
    json({
      apiVersion: 'autoscaling.internal.knative.dev/v1alpha1',
      kind: 'PodAutoscaler',
      metadata: {
        name: revision,
        namespace: NAMESPACE,
        labels,
        annotations: {
          'autoscaling.knative.dev/class': 'kpa.autoscaling.knative.dev',
          'autoscaling.knative.dev/metric': 'concurrency',
          'autoscaling.knative.dev/target': '1',
          'autoscaling.knative.dev/min-scale': '1',
          'autoscaling.knative.dev/max-scale': '3',
        },
      },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: `${revision}-deployment` }, protocolType: 'http1', reachability: 'Reachable' },
    }),
  );
  // Knative's controller would make the ServerlessService ready with its private Service.
  await waitFor('the autoscaler to create the ServerlessService', async () => ((await env.ok(['-n', NAMESPACE, 'get', 'sks', '-o', 'name'])).includes(revision) ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 500,
    abortIf: autoscalerGone,
  });
  await ok([
    '-n',
    NAMESPACE,
    'patch',
    'sks',
    revision,
    '--subresource=status',
    '--type=merge',
    '-p',
    json({ status: { serviceName: revision, privateServiceName: `${revision}-private`, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] } }),
  ]);
}

beforeAll(async () => {
  knativeDir = execFileSync('bash', [join(REPO, 'tests/env/knative-modules.sh')], { encoding: 'utf8' }).trim();
  env = await startRevisionEnv('kn-autoscaler', 'subresources-api', { service: 'subresources', containerConcurrency: 0, timeoutSeconds: 600 });
  const { ok } = env;
  const files = (dir: string, only?: (f: string) => boolean): string[] => readdirSync(join(knativeDir, dir)).filter((f) => only?.(f) ?? true).map((f) => join(knativeDir, dir, f));
  // Serving's CRDs and the ServerlessService CRD; its namespace and config maps (not its webhooks).
  for (const f of [...files('serving'), join(knativeDir, 'networking/serverlessservice.yaml')]) await ok(['apply', '--server-side', '-f', f]);
  await ok(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  const configs = files('serving-config', (f) => !['configmap-validation.yaml', 'defaulting.yaml', 'resource-validation.yaml', 'secret.yaml'].includes(f));
  for (const f of [...configs.sort(), join(knativeDir, 'networking/config-network.yaml')]) await ok(['apply', '--server-side', '-f', f]);
  await ok(['create', 'namespace', NAMESPACE]);
  pod = await env.startPod(0, { userContainer: ['tests/integration/knative/wire-recorder.ts'] });
  // The autoscaler, in a network namespace of its own (its stats server binds :8080, profiling :8008).
  const net = await env.startNetwork(2, 'autoscaler');
  autoscaler = net.inPod('autoscaler', [join(knativeDir, 'autoscaler')], {
    PATH: process.env['PATH'],
    KUBECONFIG: env.apiserver.kubeconfigPath,
    SYSTEM_NAMESPACE: 'knative-serving',
    POD_NAME: 'autoscaler-0',
    POD_IP: net.ip,
    METRICS_DOMAIN: 'knative.dev/serving',
  });
  await declareRevision(REVISION, pod.name, pod.ip);
}, 600_000);

afterAll(async () => {
  for (const s of streams) s.destroy();
  await env?.stop();
}, 60_000);

describe('Knative Serving’s autoscaler, out-of-cluster, on our queue-proxy’s stats', () => {
  it('keeps one pod while idle and scales the Deployment up when streams through queue-proxy exceed the target', async () => {
    await waitFor('the PodAutoscaler to be reconciled', async () => ((await env.ok(['-n', NAMESPACE, 'get', 'podautoscaler', REVISION, '-o', 'jsonpath={.status.metricsServiceName}'])) !== '' ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 500,
      abortIf: autoscalerGone,
    });
    expect(await replicas()).toBe(1);
    for (let i = 0; i < 3; i++) await openStream();
    await waitFor('three concurrent streams in the queue-proxy stats', async () => ((await scrapeStat(pod)).averageConcurrentRequests >= 2.9 ? true : undefined), { timeoutMs: 30_000, intervalMs: 250 });
    // Three streams against a target of 1 mean three pods. The autoscaler may get there in steps (a
    // window that saw the streams open one by one asks for 2 first), so wait for the state meant, and
    // check that it never goes past max-scale on the way.
    const seen = new Set<number>();
    await waitFor('the autoscaler to scale the Deployment up to 3', async () => {
      const n = await replicas();
      seen.add(n);
      return n >= 3 ? n : undefined;
    }, { timeoutMs: 180_000, intervalMs: 500, abortIf: autoscalerGone });
    process.stderr.write(`[kn-autoscaler] Deployment replicas seen on the way: ${[...seen].join(', ')}\n`);
    expect(Math.max(...seen)).toBe(3);
    expect(await replicas()).toBe(3);
  }, 300_000);

  it('marks the Metric of a revision whose pod’s stats cannot be scraped as failed and leaves its Deployment alone, the other revision unaffected', async () => {
    const empty = await env.startNetwork(3, 'no-queue-proxy');
    const broken = 'subresources-00002';
    await declareRevision(broken, `${broken}-deployment-gone`, empty.ip);
    const condition = await waitFor('the Metric to report the failed collection', async () => {
      const out = await env.ok(['-n', NAMESPACE, 'get', 'metric', broken, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}|{.status.conditions[?(@.type=="Ready")].reason}|{.status.conditions[?(@.type=="Ready")].message}']).catch(() => '');
      return out.startsWith('False|') ? out : undefined;
    }, { timeoutMs: 120_000, intervalMs: 500, abortIf: autoscalerGone });
    process.stderr.write(`[kn-autoscaler] broken revision's Metric Ready: ${condition}\n`);
    expect(condition).toMatch(/^False\|(DidNotReceiveStat|CollectionFailed)\|/);
    expect(await replicas(broken)).toBe(1);
    expect(await replicas()).toBe(3);
  }, 300_000);
});
