/**
 * Audit function benchmark, shipped defaults (no setting changed, the env of knative/functions/audit.yaml
 * applied, NODE_OPTIONS included, and its memory limit: every measured process runs in a memory cgroup
 * limited as the Service's container, since node sizes V8's heap from it; the duplicate filter keeps its
 * 100,000 keys and is filled before anything is measured). The function is bundled into one file (as
 * the image runs it) and pinned to one CPU core, every enrichment answered by warm informers on a real
 * apiserver; records go to a file (as a container's stdout goes to its log file). Every request
 * carries fresh auditIDs, so no line is a duplicate and every record-producing line inserts into the
 * full filter (evicting the oldest key).
 *
 * Rows, each a ratio to a bare node:http sink (`BARE_ARGS`) receiving the same bodies in the same run
 * (at one line per request also the function host's empty POST handler, sample-echo's `POST /empty`
 * bundled and pinned the same way, so the audit's own work per event is its CPU minus the host's):
 * - throughput at BENCH_BATCH lines per POST /vector and at one line per request, for the golden mix
 *   (every line a golden case, each yielding a record) and a realistic mix (half of the lines are
 *   controller/node/reader traffic the filters pass but that yields no record);
 * - p50/p99 per request at BENCH_RATE lines/s, one line per request on one connection;
 * - CPU per line (utime+stime of the function process from /proc during each run / lines sent);
 * - RSS idle (informers warm, before load) and peak (VmHWM after all load);
 * - the authorised sender's throughput (batch BENCH_BATCH) and p50/p99 (BENCH_RATE lines/s) with and
 *   without a flood of unauthenticated requests (BENCH_FLOOD_CONNECTIONS connections from a process of
 *   its own, tests/bench/flood.ts), and the flood's 401s per second.
 * Every request of the load carries the log shipper's ServiceAccount token (the install's sender
 * RBAC applied), as the function checks senders in its shipped defaults.
 * Targets (issue 17): filter full >= 20,000 lines/s at batch 100; one line per request >= 4,500
 * lines/s; CPU per line <= 150 us; p50 at 500 lines/s <= 0.4 ms. Issue 37: the audit's own CPU per
 * event at one line per request (minus the host's empty handler) <= 80 us; batch 100 >= 2x the Go
 * original's 2,965 / 18,638 lines/s (golden / realistic); RSS idle <= 55 MB, peak <= 90 MB.
 * Each run adds a dated row to tests/bench/RESULTS.md (section audit; BENCH_RESULTS=false: not).
 *
 * Knobs: BENCH_ROUNDS, BENCH_MAX_SECONDS, BENCH_CONCURRENCY, BENCH_WARMUP, BENCH_BATCH, BENCH_RATE, BENCH_CPU,
 * BENCH_FLOOD_CONNECTIONS, BENCH_CPU_PROFILE.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { env, parseConfig } from '../../shared/config/index.js';
import { REPO_ROOT } from '../../shared/runtime/testing/index.js';
import { auditConfigSchema } from '../../functions/audit/config.js';
import { GOLDEN_CASES, golden } from '../../functions/audit/testing/golden.js';
import { ensureBinaries } from '../env/binaries.js';
import { startControlPlane } from '../env/control-plane.js';
import { installCrds } from '../env/crds.js';
import { STATE_ENV } from '../env/state.js';
import { applySenderRbac, applyYaml, installDeckhouseCrds, kc, LOG_SHIPPER, vmManifest } from '../integration/audit/fixtures.js';
import { serviceAccountToken } from '../integration/metrics-auth/fixtures.js';
import { KubeClient } from '../../shared/kube/index.js';
import { codeCell, interleaved, knobs, medianBy, print, printComparison, processCpuSeconds, processMemoryMb, recordResult, type Measurement } from './lib.js';
import { cpuProfileArgs, formatProfile, summarizeProfileDir } from './cpu-profile.js';
import { runLoad, type LoadResult, type LoadSpec } from './load.js';
import { IMAGE_ENV } from '../../shared/bundle/image-env.js';
import { codeCacheState, writeCodeCache } from '../../shared/bundle/index.js';
import { BARE_ARGS, bundledArgs, cageFor, knativeServiceEnv, type Caged } from './processes.js';

const settings = knobs(
  z.object({
    BENCH_ROUNDS: env.int(3, 1).describe('Load runs per variant, interleaved; the median-req/s run is reported'),
    BENCH_MAX_SECONDS: env.int(5, 1).describe('Measured seconds per load run'),
    BENCH_CONCURRENCY: env.int(4, 1).describe('Keep-alive connections in the throughput runs (latency runs use 1)'),
    BENCH_WARMUP: env.int(300, 0).describe('Unmeasured requests before each run'),
    BENCH_BATCH: env.int(100, 1).describe('Audit lines per request in the batched rows'),
    BENCH_RATE: env.int(500, 1).describe('Lines per second (one per request) in the latency rows'),
    BENCH_CPU: env.int(1, 0).describe('The CPU core the function processes are pinned to (taskset)'),
    BENCH_FLOOD_CONNECTIONS: env.int(8, 1).describe('Connections of the unauthenticated flood in the flood rows'),
    BENCH_CPU_PROFILE: env
      .bool(false)
      .describe('Also load a second audit process, under --cpu-prof, at one line per request (BENCH_CPU_PROFILE_MIX) and print its top self-time frames'),
    BENCH_CPU_PROFILE_MIX: z.enum(['golden', 'realistic']).default('realistic').describe('The mix of the profiled load'),
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
  await applyYaml(`apiVersion: v1\nkind: Pod\nmetadata: {name: virt-launcher-vm1-x7k2p, namespace: ns1, labels: {vm.internal.virtualization.deckhouse.io/name: vm1}}
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
metadata: {name: vm1, namespace: ns1, annotations: {integrity.virtualization.deckhouse.io/core-spec-checksum: "${annotations['reference_checksum']}", integrity.virtualization.deckhouse.io/core-spec-checksum-applied: "${annotations['current_checksum']}"}}\nspec: {domain: {devices: {}}}\n`);
  await kc(['create', 'clusterrolebinding', 'bench-alice', '--clusterrole=cluster-admin', '--user=alice']);
}

/** Stands for a per-request counter in a body template, so that every request has fresh auditIDs. */
const REQUEST_TOKEN = 'RQ7TOKEN';

type Mix = 'golden' | 'realistic';

/**
 * A POST /vector body of `size` lines: the golden mix cycles the golden cases (each yields a record);
 * the realistic mix puts a line the filters pass but that yields no record between golden lines.
 */
function vectorTemplate(size: number, mix: Mix, offset = 0): string {
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
  for (let n = 0; n < size; n++) {
    const i = n + offset;
    const record = mix === 'golden' || i % 2 === 0;
    const name = GOLDEN_CASES[(mix === 'golden' ? i : i >> 1) % GOLDEN_CASES.length] ?? '';
    const event = record ? (JSON.parse(golden(name, 'input')) as Record<string, unknown>) : { ...base, ...noise[i % noise.length] };
    event['auditID'] = `${REQUEST_TOKEN}-${i}-${String(event['auditID'])}`;
    lines.push(JSON.stringify({ message: JSON.stringify(event), file: '/var/log/kube-audit/audit.log', source_type: 'file' }));
  }
  return `[${lines.join(',')}]`;
}

let requestSeq = 0;

/** A body maker: the template with a fresh request number each call (never repeats in a run). */
function freshBodies(template: string): () => string {
  return () => template.replaceAll(REQUEST_TOKEN, `r${(requestSeq++).toString(36)}`);
}

/**
 * Bodies of `size` lines that together cycle through every case of the mix, whatever the batch size:
 * at one line per request, request k carries case k (a single template would send case 0 every time).
 */
function cyclingBodies(size: number, mix: Mix): () => string {
  const cases = mix === 'golden' ? GOLDEN_CASES.length : GOLDEN_CASES.length * 2;
  const templates = Array.from({ length: Math.max(1, Math.ceil(cases / size)) }, (_, k) => freshBodies(vectorTemplate(size, mix, k * size)));
  let next = 0;
  return () => {
    const body = templates[next++ % templates.length];
    if (body === undefined) throw new Error('no body template');
    return body();
  };
}

interface Pinned {
  readonly url: string;
  readonly child: ChildProcess;
  readonly out: string;
  /** The memory cgroup it runs in (the Service's limit), when one could be made. */
  /** The memory cgroup it runs in (the Service's limit), or why none. */
  readonly caged: Caged;
}

/** The Service whose memory limit every measured process runs under (see `memoryCage`). */
const SERVICE = 'knative/functions/audit.yaml';

/**
 * Start `node <args>` pinned to BENCH_CPU with stdout into `out`, in a memory cgroup of its own limited
 * as the Service limits its container (stdout written by a `cat` outside the cgroup, as a container
 * runtime takes a container's stdout); resolves once it answers readiness.
 */
async function startPinned(name: string, args: readonly string[], out: string, extraEnv: Record<string, string>): Promise<Pinned> {
  const caged = cageFor(SERVICE, `audit-${name}`);
  const cage = caged.cage;
  const pinned = ['taskset', '-c', String(settings.BENCH_CPU), process.execPath, ...args];
  const options = {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', BODY_LIMIT_BYTES: String(64 << 20), ...IMAGE_ENV, ...extraEnv },
  };
  writeFileSync(out, '');
  const child =
    cage === undefined
      ? spawn(pinned[0] ?? '', pinned.slice(1), { ...options, stdio: ['ignore', openSync(out, 'w'), 'inherit'] })
      : // cat starts before the shell enters the cgroup, so the file's page cache is not charged to it.
        spawn('bash', ['-c', `exec > >(exec cat > "$1"); shift; ${cage.enterCommand}; exec "$@"`, 'caged', out, ...pinned], {
          ...options,
          stdio: ['ignore', 'ignore', 'inherit'],
        });
  for (let i = 0; i < 2_000 && child.exitCode === null; i++) {
    const listening = readFileSync(out, 'utf8')
      .split('\n')
      .find((l) => l.includes('"msg":"listening"'));
    const port = listening === undefined ? undefined : /"port":(\d+)/.exec(listening)?.[1];
    if (
      port !== undefined &&
      (await fetch(`http://127.0.0.1:${port}/health/readiness`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    ) {
      return { url: `http://127.0.0.1:${port}`, child, out, caged };
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await stopPinned({ url: '', child, out, caged });
  throw new Error(`${args.join(' ')} did not become ready; its output:\n${readFileSync(out, 'utf8').slice(-2_000)}`);
}

async function stopPinned(p: Pinned): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) {
    const exited = new Promise((r) => p.child.once('exit', r));
    p.child.kill('SIGTERM');
    await exited;
  }
  p.caged.remove();
}

/** One batch through the function; every VM-shaped record must carry the VM's real uid (an informer hit). */
async function checkEnrichment(audit: Pinned, headers: Record<string, string>): Promise<number> {
  const names = goldenNames;
  const uid = (await kc(['-n', 'ns1', 'get', 'virtualmachine', 'vm1', '-o', 'jsonpath={.metadata.uid}'])).trim();
  const body = `[${names.map((n) => JSON.stringify({ message: golden(n, 'input').replace(/"auditID":"/, '"auditID":"check-') })).join(',')}]`;
  let differ: string[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    const before = readFileSync(audit.out, 'utf8').length;
    const res = await fetch(`${audit.url}/vector`, { method: 'POST', body, headers });
    if (res.status === 401 || res.status === 403) throw new Error(`the function refused the bench's sender: ${res.status} ${await res.text()}`);
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

/** utime+stime of a process in microseconds, from /proc (what process.cpuUsage() reports inside it). */
const cpuMicros = (pid: number): number => processCpuSeconds(pid) * 1e6;

interface Run {
  readonly load: LoadResult;
  /** The flood's refusals per second and anything it got besides 401, when the variant floods. */
  readonly flood?: { readonly refusedPerSecond: number; readonly other: Readonly<Record<string, number>> };
  /** CPU microseconds the target process spent per line during the measured run (warm-up included in neither). */
  readonly cpuPerLineUs: number;
}

interface Variant {
  readonly name: string;
  readonly target: Pinned;
  readonly spec: LoadSpec;
  readonly lines: number;
  /** Run a flood of unauthenticated requests to the target while measuring. */
  readonly flood?: boolean;
}

interface Flood {
  readonly completed: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly elapsedMs: number;
}

/** tests/bench/flood.ts against `target`'s /vector; resolves once its first request was refused 401. */
async function startFlood(target: Pinned): Promise<{ stop: () => Promise<Flood> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'tests/bench/flood.ts')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      FLOOD_URL: `${target.url}/vector`,
      FLOOD_CONNECTIONS: String(settings.BENCH_FLOOD_CONNECTIONS),
      FLOOD_BODY: vectorTemplate(1, 'golden').replaceAll(REQUEST_TOKEN, 'flood'),
    },
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  while (!out.includes('"flooding":true')) {
    const done = await Promise.race([exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 20))]);
    if (done) throw new Error(`the flood ended before it started: ${out}`);
  }
  return {
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) throw new Error(`the flood exited ${String(code)}: ${out}`);
      return JSON.parse(last) as Flood;
    },
  };
}

async function measure(v: Variant): Promise<Run> {
  const pid = v.target.child.pid ?? 0;
  const flooding = v.flood === true ? await startFlood(v.target) : undefined;
  // runLoad warms up first; the CPU is read around the whole call and charged to the measured lines
  // plus the warm-up lines, which were processed the same way (with a flood, its refusals too).
  const before = cpuMicros(pid);
  const load = await runLoad(v.spec);
  const spent = cpuMicros(pid) - before;
  const lines = (load.completed + (v.spec.warmup ?? 0)) * v.lines;
  const flood = await flooding?.stop();
  if (flood === undefined) return { load, cpuPerLineUs: spent / lines };
  const { ['401']: refused = 0, ...other } = flood.statuses;
  return { load, cpuPerLineUs: spent / lines, flood: { refusedPerSecond: (refused / flood.elapsedMs) * 1000, other } };
}

function row(v: Variant, r: Run): Measurement {
  return {
    name: v.name,
    values: {
      lps: r.load.requestsPerSecond * v.lines,
      p50: r.load.latencyMs.p50,
      p99: r.load.latencyMs.p99,
      cpu: r.cpuPerLineUs,
      ...(r.flood === undefined ? {} : { flood: r.flood.refusedPerSecond }),
    },
    note: [
      r.load.failed > 0 ? `${r.load.failed} failed: ${JSON.stringify(r.load.statuses)}` : '',
      r.flood !== undefined && Object.keys(r.flood.other).length > 0 ? `flood answered besides 401: ${JSON.stringify(r.flood.other)}` : '',
    ]
      .filter(Boolean)
      .join('; '),
  };
}

/** Sends at least `capacity` fresh record-producing lines so that the duplicate filter is full. */
async function fillDuplicateFilter(audit: Pinned, capacity: number, headers: Record<string, string>): Promise<void> {
  const perRequest = 1000;
  const body = freshBodies(vectorTemplate(perRequest, 'golden'));
  let records = 0;
  while (records < capacity) {
    const res = await fetch(`${audit.url}/vector`, { method: 'POST', body: body(), headers });
    const summary = (await res.json()) as { records?: number };
    if ((summary.records ?? 0) === 0) throw new Error(`filling the duplicate filter: a batch of golden lines gave no record (${res.status})`);
    records += summary.records ?? 0;
  }
}

function verdict(label: string, value: number, target: number, higherIsBetter: boolean, unit: string, digits = 0): string {
  const met = higherIsBetter ? value >= target : value <= target;
  return `${label} ${value.toFixed(digits)} ${unit} (target ${higherIsBetter ? '>=' : '<='} ${target}) ${met ? 'MET' : 'MISSED'}`;
}

/**
 * Where the CPU of one line per request goes: a second audit process under --cpu-prof (not a measured
 * row: the profiler slows it), informers warm, loaded with the realistic mix; its top frames printed.
 */
async function profileOnePerRequest(
  args: readonly string[],
  extraEnv: Record<string, string>,
  headers: Record<string, string>,
  workDir: string,
): Promise<void> {
  const dir = join(workDir, 'profile');
  const audit = await startPinned('profiled', [...cpuProfileArgs(dir), ...args], join(workDir, 'profiled.out'), extraEnv);
  try {
    await checkEnrichment(audit, headers);
    const body = cyclingBodies(1, settings.BENCH_CPU_PROFILE_MIX);
    await runLoad({
      url: `${audit.url}/vector`,
      method: 'POST',
      headers,
      body,
      concurrency: settings.BENCH_CONCURRENCY,
      requests: 1e9,
      maxMs: settings.BENCH_MAX_SECONDS * 1000,
      warmup: settings.BENCH_WARMUP,
    });
  } finally {
    await stopPinned(audit); // the profile is written as the process exits
  }
  const kept = join(REPO_ROOT, 'dist', '.bench', `audit-one-per-request-${settings.BENCH_CPU_PROFILE_MIX}.cpuprofile`);
  await copyFile(join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile')) ?? 'missing.cpuprofile'), kept);
  print(
    formatProfile(`CPU profile of the audit at one line per request (${settings.BENCH_CPU_PROFILE_MIX} mix), kept in ${kept}`, summarizeProfileDir(dir, 40)),
  );
}

async function main(): Promise<void> {
  const workDir = await mkdtemp('/tmp/audit-bench-');
  const cp = await startControlPlane(await ensureBinaries(), workDir);
  process.env[STATE_ENV] = join(workDir, 'state.json');
  const running: Pinned[] = [];
  try {
    await installCrds(cp.state);
    await buildWorld();
    await applySenderRbac();
    const admin = KubeClient.fromSource({ kubeconfigPath: cp.state.kubeconfigPath });
    const token = await serviceAccountToken(admin, LOG_SHIPPER.namespace, LOG_SHIPPER.name, { expirationSeconds: 6 * 3600 }).finally(() => admin.close());
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const defaults = parseConfig(auditConfigSchema, {});
    const shipped = knativeServiceEnv('knative/functions/audit.yaml');
    const auditArgs = await bundledArgs('functions/audit/index.ts', 'bundled');
    // The image is built with the Service's V8 flags for its code cache (skaffold.yaml), so is this.
    await writeCodeCache(auditArgs[0] ?? '', shipped['NODE_OPTIONS']);
    const audit = await startPinned('audit', auditArgs, join(workDir, 'audit.out'), {
      ...shipped,
      KUBECONFIG: cp.state.kubeconfigPath,
    });
    running.push(audit);
    const bare = await startPinned('bare', BARE_ARGS, join(workDir, 'bare.out'), {});
    running.push(bare);
    const host = await startPinned('host', await bundledArgs('functions/sample-echo/index.ts', 'bundled'), join(workDir, 'host.out'), {});
    running.push(host);
    print(
      `audit benchmark: node ${process.version}, processes pinned to CPU ${settings.BENCH_CPU}, shipped defaults ` +
        `(duplicate filter ${defaults.AUDIT_DEDUP_CAPACITY} keys, ${defaults.AUDIT_DEDUP_TTL_MS / 1000} s), ` +
        `the Service's env: ${JSON.stringify(shipped)} (code cache: ${await codeCacheState(auditArgs[0] ?? '', shipped['NODE_OPTIONS'])}), ` +
        `each process ${audit.caged.note}`,
    );
    print(`enrichment check: ${await checkEnrichment(audit, headers)} golden records reproduced from warm informers`);
    await new Promise((r) => setTimeout(r, 1_000));
    const idle = processMemoryMb(audit.child.pid ?? 0);
    const bareIdle = processMemoryMb(bare.child.pid ?? 0);
    const hostIdle = processMemoryMb(host.child.pid ?? 0);
    await fillDuplicateFilter(audit, defaults.AUDIT_DEDUP_CAPACITY, headers);
    const afterFill = processMemoryMb(audit.child.pid ?? 0);
    const bareAfterFill = processMemoryMb(bare.child.pid ?? 0);
    print(`duplicate filter filled with ${defaults.AUDIT_DEDUP_CAPACITY}+ fresh record-producing lines before measuring`);

    const load = { maxMs: settings.BENCH_MAX_SECONDS * 1000, requests: 1e9, warmup: settings.BENCH_WARMUP };
    const to = (target: Pinned, mix: Mix, lines: number, concurrency: number, extra: Partial<LoadSpec> = {}): LoadSpec => ({
      ...load,
      method: 'POST',
      headers,
      url: `${target.url}/vector`,
      body: cyclingBodies(lines, mix),
      concurrency,
      ...extra,
    });
    const c = settings.BENCH_CONCURRENCY;
    const b = settings.BENCH_BATCH;
    const BARE = 'bare node:http sink, same bodies';
    const HOST = 'function host, empty POST handler, same bodies';
    const hostTo = (lines: number, concurrency: number, extra: Partial<LoadSpec> = {}): LoadSpec => ({
      ...to(host, 'golden', lines, concurrency, extra),
      url: `${host.url}/empty`,
    });
    const tables: Array<{ title: string; variants: Variant[] }> = [
      {
        title: `Throughput, filter full, batches of ${b} lines, ${c} connections`,
        variants: [
          { name: BARE, target: bare, spec: to(bare, 'golden', b, c), lines: b },
          { name: 'audit, golden mix', target: audit, spec: to(audit, 'golden', b, c), lines: b },
          { name: 'audit, realistic mix', target: audit, spec: to(audit, 'realistic', b, c), lines: b },
        ],
      },
      {
        title: `Throughput, filter full, one line per request, ${c} connections`,
        variants: [
          { name: BARE, target: bare, spec: to(bare, 'golden', 1, c, { warmup: settings.BENCH_WARMUP * 10 }), lines: 1 },
          { name: HOST, target: host, spec: hostTo(1, c, { warmup: settings.BENCH_WARMUP * 10 }), lines: 1 },
          { name: 'audit, golden mix', target: audit, spec: to(audit, 'golden', 1, c, { warmup: settings.BENCH_WARMUP * 10 }), lines: 1 },
          { name: 'audit, realistic mix', target: audit, spec: to(audit, 'realistic', 1, c, { warmup: settings.BENCH_WARMUP * 10 }), lines: 1 },
        ],
      },
      {
        title: `Latency at ${settings.BENCH_RATE} lines/s, one line per request, 1 connection`,
        variants: [
          { name: BARE, target: bare, spec: to(bare, 'golden', 1, 1, { intervalMs: 1000 / settings.BENCH_RATE }), lines: 1 },
          { name: HOST, target: host, spec: hostTo(1, 1, { intervalMs: 1000 / settings.BENCH_RATE }), lines: 1 },
          { name: 'audit, golden mix', target: audit, spec: to(audit, 'golden', 1, 1, { intervalMs: 1000 / settings.BENCH_RATE }), lines: 1 },
        ],
      },
    ];
    const f = settings.BENCH_FLOOD_CONNECTIONS;
    const QUIET = 'authorised sender, no flood';
    const FLOODED = `authorised sender, ${f} connections flooding unauthenticated`;
    const floodTables: Array<{ title: string; variants: Variant[] }> = [
      {
        title: `Flood: throughput, filter full, batches of ${b} lines, ${c} connections`,
        variants: [
          { name: QUIET, target: audit, spec: to(audit, 'golden', b, c), lines: b },
          { name: FLOODED, target: audit, spec: to(audit, 'golden', b, c), lines: b, flood: true },
        ],
      },
      {
        title: `Flood: latency at ${settings.BENCH_RATE} lines/s, one line per request, 1 connection`,
        variants: [
          { name: QUIET, target: audit, spec: to(audit, 'golden', 1, 1, { intervalMs: 1000 / settings.BENCH_RATE }), lines: 1 },
          { name: FLOODED, target: audit, spec: to(audit, 'golden', 1, 1, { intervalMs: 1000 / settings.BENCH_RATE }), lines: 1, flood: true },
        ],
      },
    ];
    const columns = [
      { key: 'lps', label: 'lines/s', digits: 0, ratio: true },
      { key: 'p50', label: 'p50 ms', digits: 3, ratio: true },
      { key: 'p99', label: 'p99 ms', digits: 3, ratio: true },
      { key: 'cpu', label: 'CPU us/line', digits: 1, ratio: true },
    ];
    const results = new Map<string, Measurement>();
    const measureTable = async (table: { title: string; variants: Variant[] }, cols: typeof columns, baseline: string): Promise<void> => {
      const runs = await interleaved(table.variants, settings.BENCH_ROUNDS, measure);
      const rows = table.variants.map((v, i) =>
        row(
          v,
          medianBy(runs[i] ?? [], (r) => r.load.requestsPerSecond),
        ),
      );
      for (const r of rows) results.set(`${table.title}|${r.name}`, r);
      printComparison(table.title, cols, rows, baseline);
    };
    for (const table of tables) await measureTable(table, columns, BARE);
    for (const table of floodTables) await measureTable(table, [...columns, { key: 'flood', label: 'flood 401/s', digits: 0, ratio: false }], QUIET);
    const peak = processMemoryMb(audit.child.pid ?? 0);
    const barePeak = processMemoryMb(bare.child.pid ?? 0);
    const hostPeak = processMemoryMb(host.child.pid ?? 0);
    printComparison(
      'Resident memory (MB); the fill sends batches of 1000 lines (the bare sink gets nothing then)',
      [
        { key: 'idle', label: 'idle', digits: 1, ratio: true },
        { key: 'fill', label: 'peak after the fill', digits: 1, ratio: true },
        { key: 'peak', label: 'peak after all runs', digits: 1, ratio: true },
      ],
      [
        { name: BARE, values: { idle: bareIdle.rss, fill: bareAfterFill.peak, peak: barePeak.peak } },
        { name: HOST, values: { idle: hostIdle.rss, fill: hostIdle.peak, peak: hostPeak.peak } },
        { name: 'audit', values: { idle: idle.rss, fill: afterFill.peak, peak: peak.peak } },
      ],
      BARE,
    );
    print(`audit's ${audit.caged.usage()}`);
    const get = (t: number, name: string, key: string): number => results.get(`${[...tables, ...floodTables][t]?.title ?? ''}|${name}`)?.values[key] ?? NaN;
    const g = 'audit, golden mix';
    const r = 'audit, realistic mix';
    // The audit's own work per event: its CPU per line at one line per request minus the host's empty POST handler's.
    const own = (name: string): number => get(1, name, 'cpu') - get(1, HOST, 'cpu');
    print(
      [
        'targets (shipped defaults, filter full):',
        `  ${verdict(`batch ${b}, golden mix:`, get(0, g, 'lps'), 20_000, true, 'lines/s')}`,
        `  ${verdict(`batch ${b}, realistic mix:`, get(0, r, 'lps'), 20_000, true, 'lines/s')}`,
        `  ${verdict('one line per request, golden mix:', get(1, g, 'lps'), 4_500, true, 'lines/s')}`,
        `  ${verdict('one line per request, realistic mix:', get(1, r, 'lps'), 4_500, true, 'lines/s')}`,
        `  ${verdict(`CPU per line at ${settings.BENCH_RATE} lines/s:`, get(2, g, 'cpu'), 150, false, 'us', 1)}`,
        `  ${verdict(`CPU per line, batch ${b}, golden mix:`, get(0, g, 'cpu'), 150, false, 'us', 1)}`,
        `  ${verdict(`p50 at ${settings.BENCH_RATE} lines/s:`, get(2, g, 'p50'), 0.4, false, 'ms', 3)} (p99 ${get(2, g, 'p99').toFixed(3)} ms)`,
        `  ${verdict("one line per request, golden mix, the audit's own CPU per event (minus the host's):", own(g), 80, false, 'us', 1)} (audit ${get(1, g, 'cpu').toFixed(1)}, host ${get(1, HOST, 'cpu').toFixed(1)} us)`,
        `  ${verdict("one line per request, realistic mix, the audit's own CPU per event (minus the host's):", own(r), 80, false, 'us', 1)} (audit ${get(1, r, 'cpu').toFixed(1)} us)`,
        `  ${verdict(`batch ${b}, golden mix, against the Go original's 2,965 lines/s:`, get(0, g, 'lps') / 2_965, 2, true, 'x', 1)}`,
        `  ${verdict(`batch ${b}, realistic mix, against the Go original's 18,638 lines/s:`, get(0, r, 'lps') / 18_638, 2, true, 'x', 1)}`,
        `  ${verdict('RSS idle:', idle.rss, 55, false, 'MB', 1)}`,
        `  ${verdict('RSS peak under load:', peak.peak, 90, false, 'MB', 1)}`,
        `  ${verdict(`during the flood (${get(4, FLOODED, 'flood').toFixed(0)} 401/s), p50 at ${settings.BENCH_RATE} lines/s:`, get(4, FLOODED, 'p50'), 0.4, false, 'ms', 3)} (p99 ${get(4, FLOODED, 'p99').toFixed(3)} ms; without it ${get(4, QUIET, 'p50').toFixed(3)} / ${get(4, QUIET, 'p99').toFixed(3)} ms)`,
        `  ${verdict(`during the flood (${get(3, FLOODED, 'flood').toFixed(0)} 401/s), batch ${b}:`, get(3, FLOODED, 'lps'), 20_000, true, 'lines/s')} (without it ${get(3, QUIET, 'lps').toFixed(0)})`,
      ].join('\n'),
    );
    const records = execFileSync('grep', ['-c', '^{"type"', audit.out], { encoding: 'utf8' }).trim();
    print(`record lines written: ${records} (${(statSync(audit.out).size / 1e6).toFixed(0)} MB of output)`);
    const n0 = (v: number): string => v.toLocaleString('en-US', { maximumFractionDigits: 0 });
    recordResult('audit', [
      codeCell(),
      `${n0(get(0, g, 'lps'))} / ${n0(get(0, r, 'lps'))}`,
      `${n0(get(1, g, 'lps'))} / ${n0(get(1, r, 'lps'))} (host ${n0(get(1, HOST, 'lps'))})`,
      `${get(1, g, 'cpu').toFixed(0)} / ${get(1, HOST, 'cpu').toFixed(0)} / ${own(g).toFixed(0)}; realistic ${own(r).toFixed(0)} µs`,
      `${get(2, g, 'cpu').toFixed(0)} (bare ${get(2, BARE, 'cpu').toFixed(0)}) µs`,
      `${get(2, g, 'p50').toFixed(3)} / ${get(2, g, 'p99').toFixed(3)} ms`,
      `${idle.rss.toFixed(1)} / ${peak.peak.toFixed(1)} MB${audit.caged.cage === undefined ? ' (no memory limit)' : ''}`,
    ]);
    if (settings.BENCH_CPU_PROFILE) await profileOnePerRequest(auditArgs, { ...shipped, KUBECONFIG: cp.state.kubeconfigPath }, headers, workDir);
  } finally {
    for (const p of running) await stopPinned(p);
    await cp.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
