/**
 * Audit function benchmark: audit lines per second through the Vector input (POST /vector, batches of
 * BENCH_BATCH lines), with every enrichment answered by warm informers on a real apiserver, the
 * function compiled and pinned to one CPU core; and the latency a batch adds over the empty function.
 * Targets (issue 5): over 20,000 lines/s; p99 added latency per batch of 100 under 20 ms.
 *
 * Records go to a file (as a container's stdout goes to its log file), not to this process.
 * The duplicate filter is shrunk to one entry (AUDIT_DEDUP_CAPACITY=1) because the load repeats the
 * same request body; every line of a batch has its own auditID, so each still produces its record.
 *
 * Knobs: BENCH_ROUNDS, BENCH_MAX_SECONDS, BENCH_CONCURRENCY, BENCH_WARMUP, BENCH_BATCH, BENCH_CPU.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { REPO_ROOT } from '../../shared/runtime/testing/index.js';
import { GOLDEN_CASES, golden } from '../../functions/audit/testing/golden.js';
import { ensureBinaries } from '../env/binaries.js';
import { startControlPlane } from '../env/control-plane.js';
import { installCrds } from '../env/crds.js';
import { STATE_ENV } from '../env/state.js';
import { applyYaml, installDeckhouseCrds, kc, vmManifest } from '../integration/audit/fixtures.js';
import { EMPTY_FUNCTION_BASELINE, interleaved, knobs, medianBy, print, printComparison, type Measurement } from './lib.js';
import { runLoad, type LoadResult } from './load.js';
import { compiledArgs } from './processes.js';

const settings = knobs(
  z.object({
    BENCH_ROUNDS: env.int(3, 1).describe('Load runs per variant, interleaved; the median-req/s run is reported'),
    BENCH_MAX_SECONDS: env.int(5, 1).describe('Measured seconds per load run'),
    BENCH_CONCURRENCY: env.int(4, 1).describe('Keep-alive connections in the throughput runs (latency runs use 1)'),
    BENCH_WARMUP: env.int(300, 0).describe('Unmeasured requests before each run'),
    BENCH_BATCH: env.int(100, 1).describe('Audit lines per request'),
    BENCH_CPU: env.int(1, 0).describe('The CPU core the function processes are pinned to (taskset)'),
  }),
);

const goldenNames = GOLDEN_CASES;

/** The cluster state the golden lines are enriched from (the in-memory world of the unit tests, for real). */
async function buildWorld(): Promise<void> {
  await installDeckhouseCrds();
  for (const ns of ['ns1', 'd8-virtualization']) await kc(['create', 'namespace', ns]);
  await applyYaml('apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n');
  await kc([
    'patch',
    'node',
    'node-1',
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({
      status: {
        addresses: [
          { type: 'InternalIP', address: '10.0.0.5' },
          { type: 'Hostname', address: 'node-1' },
          { type: 'ExternalIP', address: '203.0.113.5' },
        ],
      },
    }),
  ]);
  for (const [disk, sc] of [
    ['vm1-root', 'ceph-rbd'],
    ['vm1-data', 'ceph-rbd'],
    ['vm1-scratch', 'local-path'],
  ] as const) {
    await applyYaml(`apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualDisk\nmetadata: {name: ${disk}, namespace: ns1}\nspec: {}\n`);
    await kc(['-n', 'ns1', 'patch', 'virtualdisk', disk, '--subresource=status', '--type=merge', '-p', `{"status":{"storageClassName":"${sc}"}}`]);
  }
  await applyYaml(
    vmManifest('ns1', 'vm1', 'vm1-root').replace(
      /blockDeviceRefs: .*/,
      'blockDeviceRefs: [{kind: VirtualDisk, name: vm1-root}, {kind: VirtualDisk, name: vm1-data}, {kind: VirtualImage, name: ubuntu-iso}, {kind: VirtualDisk, name: vm1-scratch}]',
    ),
  );
  await kc([
    '-n',
    'ns1',
    'patch',
    'virtualmachine',
    'vm1',
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({
      status: {
        nodeName: 'node-1',
        guestOSInfo: { name: 'Ubuntu 24.04 LTS' },
        versions: { qemu: '9.2.0', libvirt: '10.9.0' },
      },
    }),
  ]);
  await applyYaml(`apiVersion: v1\nkind: Pod\nmetadata: {name: virt-launcher-vm1-x7k2p, namespace: ns1, labels: {vm.kubevirt.internal.virtualization.deckhouse.io/name: vm1}}
spec: {nodeName: node-1, containers: [{name: d8v-compute, image: compute}]}\n`);
  await kc([
    '-n',
    'ns1',
    'patch',
    'pod',
    'virt-launcher-vm1-x7k2p',
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({
      status: {
        containerStatuses: [
          {
            name: 'd8v-compute',
            image: 'compute',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, message: '{"event":"guest-shutdown","reason":"guest OS powered off"}' } },
          },
        ],
      },
    }),
  ]);
  await applyYaml(`apiVersion: v1\nkind: Pod\nmetadata: {name: virt-handler-8k2lp, namespace: d8-virtualization, annotations: {versions.virtualization.deckhouse.io/qemu-version: 9.2.0, versions.virtualization.deckhouse.io/libvirt-version: 10.9.0}}
spec: {nodeName: node-1, containers: [{name: handler, image: handler}]}\n`);
  await applyYaml('apiVersion: deckhouse.io/v1alpha1\nkind: Module\nmetadata: {name: virtualization}\nproperties: {version: v1.1.0}\n');
  await applyYaml('apiVersion: deckhouse.io/v1alpha1\nkind: ModuleConfig\nmetadata: {name: virtualization}\nspec: {enabled: true}\n');
  const annotations = JSON.parse(golden('integrity-check-failed', 'expected')) as Record<string, string>;
  await applyYaml(`apiVersion: internal.virtualization.deckhouse.io/v1\nkind: InternalVirtualizationVirtualMachineInstance
metadata: {name: vm1, namespace: ns1, annotations: {integrity.virtualization.deckhouse.io/core-spec-checksum: "${annotations['reference_checksum']}", integrity.virtualization.deckhouse.io/core-spec-checksum-applied: "${annotations['current_checksum']}"}}\nspec: {}\n`);
  await kc(['create', 'clusterrolebinding', 'bench-alice', '--clusterrole=cluster-admin', '--user=alice']);
}

/** Golden lines (each yields a record) interleaved with lines the filters pass that yield none. */
function vectorBatch(size: number): string {
  const noise = [
    {
      verb: 'watch',
      objectRef: { resource: 'virtualmachines', apiGroup: 'virtualization.deckhouse.io' },
      user: { username: 'system:serviceaccount:d8-virtualization:virtualization-controller' },
    },
    {
      verb: 'get',
      objectRef: { resource: 'virtualmachines', namespace: 'ns1', name: 'vm1', apiGroup: 'virtualization.deckhouse.io' },
      user: { username: 'jane' },
    },
    { verb: 'patch', objectRef: { resource: 'pods', namespace: 'ns1', name: 'web-0', subresource: 'status' }, user: { username: 'system:node:node-1' } },
  ];
  const base = JSON.parse(golden('vm-manage-patch', 'input')) as Record<string, unknown>;
  const lines: string[] = [];
  for (let i = 0; i < size; i++) {
    const name = goldenNames[(i >> 1) % goldenNames.length] ?? '';
    const event = i % 2 === 0 ? (JSON.parse(golden(name, 'input')) as Record<string, unknown>) : { ...base, ...noise[i % noise.length] };
    event['auditID'] = `bench-${i}-${String(event['auditID'])}`;
    lines.push(JSON.stringify({ message: JSON.stringify(event), file: '/var/log/kube-audit/audit.log', source_type: 'file' }));
  }
  return `[${lines.join(',')}]`;
}

interface Pinned {
  readonly url: string;
  readonly child: ChildProcess;
  readonly out: string;
}

/** Start `node <args>` pinned to BENCH_CPU with stdout into `out`; resolves once it answers readiness. */
async function startPinned(args: readonly string[], out: string, extraEnv: Record<string, string>): Promise<Pinned> {
  const child = spawn('taskset', ['-c', String(settings.BENCH_CPU), process.execPath, ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', openSync(out, 'w'), 'inherit'],
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', BODY_LIMIT_BYTES: String(64 << 20), ...extraEnv },
  });
  for (let i = 0; i < 2_000; i++) {
    const port = /"port":(\d+)[^\n]*"msg":"listening"/.exec(readFileSync(out, 'utf8'))?.[1];
    if (
      port !== undefined &&
      (await fetch(`http://127.0.0.1:${port}/health/readiness`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    ) {
      return { url: `http://127.0.0.1:${port}`, child, out };
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill('SIGKILL');
  throw new Error(`${args.join(' ')} did not become ready; its output:\n${readFileSync(out, 'utf8').slice(-2_000)}`);
}

async function stopPinned(p: Pinned): Promise<void> {
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await exited;
}

/** One batch through the function; every VM-shaped record must carry the VM's real uid (an informer hit). */
async function checkEnrichment(audit: Pinned): Promise<number> {
  const names = goldenNames;
  const uid = (await kc(['-n', 'ns1', 'get', 'virtualmachine', 'vm1', '-o', 'jsonpath={.metadata.uid}'])).trim();
  const body = `[${names.map((n) => JSON.stringify({ message: golden(n, 'input').replace(/"auditID":"/, '"auditID":"check-') })).join(',')}]`;
  let differ: string[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    const before = readFileSync(audit.out, 'utf8').length;
    await fetch(`${audit.url}/vector`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    const lines = readFileSync(audit.out, 'utf8')
      .slice(before)
      .split('\n')
      .filter((l) => l.startsWith('{"type"'));
    const expected = names.map((n) => golden(n, 'expected'));
    const asGolden = (l: string): string => l.replace(uid, '6c1f2d3e-aaaa-4bbb-8ccc-0123456789ab').replace('"uid":"check-', '"uid":"');
    differ = lines.map(asGolden).filter((l, i) => l !== expected[i]);
    if (differ.length === 0 && lines.length === expected.length) return lines.length;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`records never matched the golden records (informers not warm?); differing:\n${differ.join('\n')}`);
}

function row(name: string, r: LoadResult, linesPerRequest: number): Measurement {
  return {
    name,
    values: { lps: r.requestsPerSecond * linesPerRequest, rps: r.requestsPerSecond, p50: r.latencyMs.p50, p99: r.latencyMs.p99 },
    note: r.failed > 0 ? `${r.failed} failed: ${JSON.stringify(r.statuses)}` : '',
  };
}

async function main(): Promise<void> {
  const workDir = await mkdtemp('/tmp/audit-bench-');
  const cp = await startControlPlane(await ensureBinaries(), workDir);
  process.env[STATE_ENV] = join(workDir, 'state.json');
  const running: Pinned[] = [];
  try {
    await installCrds(cp.state);
    await buildWorld();
    const [auditArgs, emptyArgs] = [await compiledArgs('functions/audit/index.ts'), await compiledArgs('functions/sample-echo/index.ts')];
    const audit = await startPinned(auditArgs, join(workDir, 'audit.out'), { KUBECONFIG: cp.state.kubeconfigPath, AUDIT_DEDUP_CAPACITY: '1' });
    running.push(audit);
    const empty = await startPinned(emptyArgs, join(workDir, 'empty.out'), {});
    running.push(empty);
    print(`audit benchmark: node ${process.version}, functions pinned to CPU ${settings.BENCH_CPU}, batches of ${settings.BENCH_BATCH} lines`);
    print(`enrichment check: ${await checkEnrichment(audit)} golden records reproduced from warm informers`);

    const batch = vectorBatch(settings.BENCH_BATCH);
    const load = { maxMs: settings.BENCH_MAX_SECONDS * 1000, requests: 1e9, warmup: settings.BENCH_WARMUP };
    const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: batch };
    const variants = [
      [`${EMPTY_FUNCTION_BASELINE}, 1 conn`, { ...load, concurrency: 1, url: `${empty.url}/empty` }, 0],
      [`audit POST /vector, 1 conn`, { ...load, ...post, concurrency: 1, url: `${audit.url}/vector` }, settings.BENCH_BATCH],
      [EMPTY_FUNCTION_BASELINE, { ...load, concurrency: settings.BENCH_CONCURRENCY, url: `${empty.url}/empty` }, 0],
      [
        `audit POST /vector, ${settings.BENCH_CONCURRENCY} conns`,
        { ...load, ...post, concurrency: settings.BENCH_CONCURRENCY, url: `${audit.url}/vector` },
        settings.BENCH_BATCH,
      ],
    ] as const;
    const runs = await interleaved(variants, settings.BENCH_ROUNDS, ([, spec]) => runLoad(spec));
    const rows = variants.map(([name, , lines], i) =>
      row(
        name,
        medianBy(runs[i] ?? [], (r) => r.requestsPerSecond),
        lines,
      ),
    );
    const columns = [
      { key: 'lps', label: 'lines/s', digits: 0 },
      { key: 'rps', label: 'req/s', digits: 0, ratio: true },
      { key: 'p50', label: 'p50 ms', digits: 3, ratio: true },
      { key: 'p99', label: 'p99 ms', digits: 3, ratio: true },
    ];
    printComparison('Unloaded: one connection (latency per batch)', columns, rows.slice(0, 2), variants[0][0]);
    printComparison(`Loaded: ${settings.BENCH_CONCURRENCY} connections (throughput)`, columns, rows.slice(2), variants[2][0]);
    const added = (rows[1]?.values['p99'] ?? NaN) - (rows[0]?.values['p99'] ?? NaN);
    const best = Math.max(rows[1]?.values['lps'] ?? 0, rows[3]?.values['lps'] ?? 0);
    print(
      `targets: lines/s ${best.toFixed(0)} (target > 20000) ${best > 20_000 ? 'MET' : 'MISSED'}; ` +
        `p99 added per batch ${added.toFixed(2)} ms (target < 20) ${added < 20 ? 'MET' : 'MISSED'}`,
    );
    print(
      `record lines written: ${
        readFileSync(audit.out, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('{"type"')).length
      } ` + `(${(statSync(audit.out).size / 1e6).toFixed(0)} MB of output)`,
    );
  } finally {
    for (const p of running) await stopPinned(p);
    await cp.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
