/**
 * virtualization-dra benchmark, against a control plane started here, with the daemon's shipped
 * defaults (in this process, sysfs and kubelet dirs in a temp dir):
 *
 * 1. NodePrepareResources latency for a claim of one device, as kubelet calls it (gRPC v1 over the
 *    Unix socket): the daemon reads the claim (from its informer cache, which the bench lets catch up
 *    first, as the scheduler-to-kubelet delay does), writes the CDI spec and the checkpoint (both on
 *    tmpfs, as on a node: atomic, no fsync). The claim's address annotation is written when the
 *    daemon's informer sees the allocation; a prepare waits for that write if it is still under way,
 *    and makes it itself if it failed (the bench prints how many were written where). Also a bare
 *    annotation patch of the claim (the write that sat in every prepare's path before it was made
 *    ahead). Baseline: a bare GET of the same claim from the apiserver (what every prepare paid before
 *    the claims came from an informer cache). Target: p99 < 10 ms.
 * 2. Discovery and publication of BENCH_DEVICES USB devices (a fixture sysfs tree): from the daemon's
 *    start until the apiserver lists every device in the node's slices. Baseline: bare creates of
 *    the same slices. Also the sysfs scan alone. Target: < 2 s for 500 devices.
 *
 * Knobs: BENCH_PREPARES, BENCH_DEVICES, BENCH_ROUNDS.
 *
 * Each run adds a dated row to tests/bench/RESULTS.md (section dra; BENCH_RESULTS=false: not).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { KubeClient } from '../../shared/kube/index.js';
import { rootLogger } from '../../shared/log/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import { loadConfig } from '../../daemons/dra/config.js';
import { runDaemon } from '../../daemons/dra/daemon.js';
import { buildSlices, sliceDevice, usbDeviceName } from '../../daemons/dra/devices.js';
import { scanUsbDevices, writeFixtureSysfs, type FixtureDevice } from '../../daemons/dra/discovery/index.js';
import {
  NodeSchema,
  ResourceClaimSchema,
  ResourceSliceSchema,
  nodeDescriptor,
  resourceClaimDescriptor,
  resourceSliceDescriptor,
} from '../../shared/api/k8s/resource.js';
import { ensureBinaries } from '../env/binaries.js';
import { startControlPlane } from '../env/control-plane.js';
import { newKubeConfig } from '../env/index.js';
import { allocatedClaim, DraClient } from '../integration/dra/kubelet-client.js';
import { codeCell, interleaved, knobs, medianBy, nowMs, print, printComparison, recordResult, summarize, type Measurement } from './lib.js';

const settings = knobs(
  z.object({
    BENCH_PREPARES: env.int(300, 10).describe('Claims prepared one after another (each unprepared after)'),
    BENCH_DEVICES: env.int(500, 1).describe('USB devices in the fixture tree for discovery and publication'),
    BENCH_ROUNDS: env.int(3, 1).describe('Runs of the discovery rows, interleaved; the median is reported'),
  }),
);

const quiet = rootLogger.child({ component: 'bench' });
quiet.level = 'silent';
const MANAGER = 'dra-bench';

/** n devices on buses of up to 100 ports each. */
function devices(n: number): FixtureDevice[] {
  return Array.from({ length: n }, (_, i) => ({
    busId: `${Math.floor(i / 100) + 1}-${(i % 100) + 1}`,
    devNum: (i % 100) + 2,
    vendorId: '0529',
    productId: (i % 0xffff).toString(16).padStart(4, '0'),
    product: `bench device ${i}`,
    serial: `B${i}`,
  }));
}

let shmRoot = '/dev/shm';

async function nodeDir(root: string, name: string, fixture: FixtureDevice[]): Promise<Record<string, string>> {
  const dir = join(root, name);
  const env = {
    NODE_NAME: name,
    SYS_ROOT: join(dir, 'sys'),
    // /var/run/cdi and /var/run/virtualization-dra (the checkpoint) are tmpfs on a node: so is /dev/shm here.
    CDI_ROOT: join(shmRoot, name, 'cdi'),
    STATE_DIR: join(shmRoot, name, 'state'),
    KUBELET_PLUGINS_DIR: join(dir, 'plugins'),
    KUBELET_REGISTRY_DIR: join(dir, 'registry'),
    HEALTH_PORT: '0',
    HEALTH_HOST: '127.0.0.1',
    METRICS_AUTH: 'none',
  };
  await mkdir(env.CDI_ROOT, { recursive: true });
  await writeFixtureSysfs(env.SYS_ROOT, fixture);
  return env;
}

async function preparedLatency(kube: KubeClient, root: string): Promise<{ p50: number; p99: number; bareGetP50: number }> {
  const name = 'bench-prepare';
  await kube.resource(nodeDescriptor, NodeSchema, MANAGER).create({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
  const fixture = devices(1);
  const abort = new AbortController();
  const daemon = runDaemon({ config: loadConfig(await nodeDir(root, name, fixture)), kube, signal: abort.signal, logger: quiet });
  const client = new DraClient(join(root, name, 'plugins', 'virtualization-usb', 'dra.sock'), 'v1');
  try {
    await daemon.started;
    const claims = kube.resource(resourceClaimDescriptor, ResourceClaimSchema, MANAGER);
    await kube.rest.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dra-bench' } },
      what: 'create namespace',
    });
    const device = usbDeviceName(fixture[0], name);
    const prepare: number[] = [];
    const get: number[] = [];
    const patch: number[] = [];
    for (let i = 0; i < settings.BENCH_PREPARES; i++) {
      const claim = await allocatedClaim(kube, 'dra-bench', `c${i}`, name, device);
      // kubelet prepares after the scheduler's allocation and the pod's binding, long after the
      // daemon's informer saw the claim: wait for that too (a miss would be a GET, counted below).
      await waitFor('the claim in the daemon cache', () => daemon.claims.holds({ namespace: 'dra-bench', name: `c${i}`, uid: claim.uid }), {
        intervalMs: 1,
      });
      let t = nowMs();
      await claims.get({ namespace: 'dra-bench', name: `c${i}` });
      get.push(nowMs() - t);
      // The one write every prepare makes (the address annotation), as a bare merge patch.
      t = nowMs();
      await claims.mergePatch({ namespace: 'dra-bench', name: `c${i}` }, { metadata: { annotations: { 'bench.virtualization.deckhouse.io/probe': `${i}` } } });
      patch.push(nowMs() - t);
      t = nowMs();
      const res = await client.prepare([claim]);
      prepare.push(nowMs() - t);
      if (res.claims[claim.uid]?.error) throw new Error(`prepare failed: ${res.claims[claim.uid]?.error ?? ''}`);
      await client.unprepare([claim]);
    }
    const p = summarize(prepare);
    const g = summarize(get);
    const reads = daemon.metrics.claimReads;
    const writes = daemon.metrics.addressWrites;
    print(
      `[dra] claims read for prepares: ${await reads.get({ source: 'cache' })} from the informer cache, ${await reads.get({ source: 'apiserver' })} by GET; ` +
        `address annotations written ahead: ${await writes.get({ when: 'ahead' })}, in the prepare: ${await writes.get({ when: 'prepare' })}`,
    );
    const row = (rowName: string, s: ReturnType<typeof summarize>, note: string): Measurement => ({
      name: rowName,
      values: { p50: s.p50, p90: s.p90, p99: s.p99, max: s.max },
      note,
    });
    printComparison(
      `NodePrepareResources, one claim of one device (${settings.BENCH_PREPARES} claims), milliseconds`,
      [
        { key: 'p50', label: 'p50', digits: 2, ratio: true },
        { key: 'p90', label: 'p90', digits: 2 },
        { key: 'p99', label: 'p99', digits: 2, ratio: true },
        { key: 'max', label: 'max', digits: 2 },
      ],
      [
        row('bare GET of the claim', g, 'apiserver only'),
        row('bare annotation patch of the claim', summarize(patch), 'before it was written ahead, in every prepare'),
        row('NodePrepareResources (gRPC v1)', p, `target p99 < 10 ms: ${p.p99 < 10 ? 'met' : 'MISSED'}`),
      ],
      'bare GET of the claim',
    );
    return { p50: p.p50, p99: p.p99, bareGetP50: g.p50 };
  } finally {
    client.close();
    abort.abort();
    await daemon.done;
  }
}

async function discovery(kube: KubeClient, root: string): Promise<number> {
  const n = settings.BENCH_DEVICES;
  const fixture = devices(n);
  const slices = kube.resource(resourceSliceDescriptor, ResourceSliceSchema, MANAGER);
  let round = 0;
  const listed = async (node: string): Promise<number> =>
    (await slices.list({ fieldSelector: `spec.driver=virtualization-usb,spec.nodeName=${node}` })).items.reduce((a, s) => a + (s.spec.devices?.length ?? 0), 0);
  const variants = ['bare', 'scan', 'daemon'] as const;
  const [bare = [], scan = [], daemonRuns = []] = await interleaved(variants, settings.BENCH_ROUNDS, async (v) => {
    const node = `bench-disc-${v}-${round++}`;
    const env = await nodeDir(root, node, fixture);
    if (v === 'scan') {
      const t = nowMs();
      const result = await scanUsbDevices(env.SYS_ROOT);
      if (result.devices.length !== n) throw new Error(`scan found ${result.devices.length} of ${n}`);
      return nowMs() - t;
    }
    if (v === 'bare') {
      const sliceDevices = (await scanUsbDevices(env.SYS_ROOT)).devices.map((d) => sliceDevice(d, node));
      const t = nowMs();
      for (const s of buildSlices({ driver: 'virtualization-usb', nodeName: node, generation: 1, devices: sliceDevices })) await slices.create(s);
      const ms = nowMs() - t;
      for (const s of buildSlices({ driver: 'virtualization-usb', nodeName: node, generation: 1, devices: sliceDevices }))
        await slices.delete({ name: s.metadata.name ?? '' });
      return ms;
    }
    const abort = new AbortController();
    const t = nowMs();
    const daemon = runDaemon({ config: loadConfig(env), kube, signal: abort.signal, logger: quiet });
    await waitFor(`${n} devices published`, async () => (await listed(node)) === n, { timeoutMs: 60_000, intervalMs: 10 });
    const ms = nowMs() - t;
    abort.abort();
    await daemon.done;
    return ms;
  });
  const row = (name: string, runs: number[], note: string): Measurement => ({ name, values: { ms: medianBy(runs, (x) => x) }, note });
  const daemonMs = medianBy(daemonRuns, (x) => x);
  printComparison(
    `${n} USB devices: discovery and ResourceSlice publication (median of ${settings.BENCH_ROUNDS}), milliseconds`,
    [{ key: 'ms', label: 'ms', digits: 1, ratio: true }],
    [
      row('bare creates of the slices', bare, `${Math.ceil(n / 128)} slices, apiserver only`),
      row('sysfs scan only', scan, 'discovery/sysfs.ts'),
      row('daemon start → all listed', daemonRuns, `target < 2000 ms: ${daemonMs < 2000 ? 'met' : 'MISSED'}`),
    ],
    'bare creates of the slices',
  );
  return daemonMs;
}

async function main(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'bench-dra-'));
  shmRoot = await mkdtemp('/dev/shm/bench-dra-');
  const cp = await startControlPlane(await ensureBinaries(), workDir);
  const kube = new KubeClient(newKubeConfig(cp.state.kubeconfigPath));
  try {
    print(`[dra] ${settings.BENCH_PREPARES} prepares; ${settings.BENCH_DEVICES} devices × ${settings.BENCH_ROUNDS} round(s)`);
    const prepare = await preparedLatency(kube, join(workDir, 'nodes'));
    const listedMs = await discovery(kube, join(workDir, 'nodes'));
    recordResult('dra', [
      codeCell(),
      `${prepare.p50.toFixed(2)} ms (${(prepare.p50 / prepare.bareGetP50).toFixed(2)}x a bare GET)`,
      `${prepare.p99.toFixed(2)} ms`,
      `${listedMs.toFixed(0)} ms (${settings.BENCH_DEVICES} devices, median of ${settings.BENCH_ROUNDS})`,
    ]);
  } finally {
    kube.close();
    await cp.stop();
    await rm(workDir, { recursive: true, force: true });
    await rm(shmRoot, { recursive: true, force: true });
  }
}

await main();
