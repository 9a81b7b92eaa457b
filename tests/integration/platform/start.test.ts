/**
 * System test of `npm start` (the binaries cached): the whole module runs locally and its demo plays
 * through, checked from the apiserver while it runs (watches on VMs, operations and nodes from the
 * moment the command prints its KUBECONFIG), from the audit function's records, and from the process
 * table after it exits. Then the bad inputs: a unit that dies, a control plane that cannot start.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import { contains, parseIPv4, parseSubnet } from '../../../shared/api/ipv4.js';
import { Informer, KubeClient } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { getTestEnv } from '../../env/index.js';
import { COMPUTE_CONTAINER, SIMULATED_IMAGE } from '../../../platform/simulators/kubevirt-simulator/launcher.js';
import { VM_NAME_LABEL } from '../../../shared/api/internal/launcher.js';
import { npmStart, recordedChildren, REPO, survivors } from './fixtures.js';

/** The label real virt-controller gives a launcher pod, as the apiserver stores it (through the api-rewriter). */
const LAUNCHER_LABEL = 'kubevirt.internal.virtualization.deckhouse.io';

const LooseSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z
    .looseObject({ nodeName: z.string().optional(), containers: z.array(z.looseObject({ name: z.string(), image: z.string().optional() })).optional() })
    .optional(),
  status: z
    .looseObject({
      phase: z.string().optional(),
      nodeName: z.string().optional(),
      ipAddress: z.string().optional(),
      podIP: z.string().optional(),
      progress: z.string().optional(),
      format: z.string().optional(),
      // A disk's capacity is a quantity; a node's is a map.
      capacity: z.unknown().optional(),
      size: z.looseObject({ unpackedBytes: z.string().optional() }).optional(),
      target: z.looseObject({ registryURL: z.string().optional(), persistentVolumeClaimName: z.string().optional() }).optional(),
    })
    .optional(),
});
type Loose = z.infer<typeof LooseSchema>;
const VM_CIDR = '10.77.0.0/16';
const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/** Every state an object was seen in, by name. */
class Observed {
  readonly seen = new Map<string, Loose[]>();
  record = (o: Loose): void => {
    const key = o.metadata.name ?? '';
    this.seen.set(key, [...(this.seen.get(key) ?? []), o]);
  };
  of(name: string): Loose[] {
    return this.seen.get(name) ?? [];
  }
}

function watch(
  kube: KubeClient,
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced: boolean,
  into: Observed,
  signal: AbortSignal,
): Informer<Loose> {
  const client = kube.resource({ group, version, plural, kind, namespaced }, LooseSchema, 'platform-test');
  const inf = new Informer<Loose>({ client, signal, backoff: { initialMs: 100, maxMs: 500 } });
  inf.on('add', into.record);
  inf.on('update', into.record);
  return inf.start();
}

/** The compute container's image of every launcher pod of VM `vm` seen, found by the labels real virt-controller gives them. */
function launcherImages(pods: Observed, vm: string): string[] {
  return [...pods.seen.values()]
    .map((seen) => seen.at(-1))
    .filter((p) => p?.metadata.labels?.[LAUNCHER_LABEL] === 'virt-launcher' && p.metadata.labels[VM_NAME_LABEL] === vm)
    .map((p) => p?.spec?.containers?.find((c) => c.name === COMPUTE_CONTAINER)?.image ?? '');
}

const leftovers: string[] = [];
afterAll(async () => {
  // Nothing of a failed run may stay behind for the next test files; the work directories go unless kept.
  for (const dir of leftovers) for (const s of survivors(dir)) process.stderr.write(`platform test left: ${s}\n`);
  if (process.env['VIRT_TESTENV_KEEP'] !== '1') await Promise.all(leftovers.map((d) => rm(d, { recursive: true, force: true })));
});

describe('npm start', () => {
  it('runs the module locally with real virt-controller and virt-api and plays the demo: image imported into DVCR, disk from it, VM Running on a simulated node, Restart and Migrate completed, audit records, nothing left after exit', async () => {
    const workDir = await mkdtemp(join(base, 'platform-test-'));
    leftovers.push(workDir);
    const run = npmStart(['--demo', '--exit-after-demo', '--work-dir', workDir, '--vm-cidr', VM_CIDR]);
    const stop = new AbortController();
    const vms = new Observed();
    const ops = new Observed();
    const nodes = new Observed();
    const images = new Observed();
    const disks = new Observed();
    const pods = new Observed();
    let kube: KubeClient | undefined;
    try {
      const line = await run.line(/export KUBECONFIG=/);
      kube = KubeClient.fromSource({ kubeconfigPath: line.replace(/^.*export KUBECONFIG=/, '').trim() });
      watch(kube, 'virtualization.deckhouse.io', 'v1alpha2', 'virtualmachines', 'VirtualMachine', true, vms, stop.signal);
      watch(kube, 'virtualization.deckhouse.io', 'v1alpha2', 'virtualmachineoperations', 'VirtualMachineOperation', true, ops, stop.signal);
      watch(kube, '', 'v1', 'nodes', 'Node', false, nodes, stop.signal);
      watch(kube, 'virtualization.deckhouse.io', 'v1alpha2', 'virtualimages', 'VirtualImage', true, images, stop.signal);
      watch(kube, 'virtualization.deckhouse.io', 'v1alpha2', 'virtualdisks', 'VirtualDisk', true, disks, stop.signal);
      watch(kube, '', 'v1', 'pods', 'Pod', true, pods, stop.signal);
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([run.exited, new Promise((r) => (timer = setTimeout(() => r('still running after 330 s'), 330_000)))]);
      clearTimeout(timer);
      expect({ code, output: code === 0 ? '' : run.tail() }).toEqual({ code: 0, output: '' });
    } finally {
      stop.abort();
      kube?.close();
      run.interrupt();
      await run.exited;
    }
    const output = run.lines.join('\n');

    // KubeVirt was real (the binaries are built by the test environment): upstream virt-controller made
    // the demo VM's launcher pod, with the labels it gives through the api-rewriter and its own launcher
    // image (the simulator, as node agent only, makes no pod).
    expect(output).toMatch(/KubeVirt: REAL virt-controller and virt-api v1\.6\.0/);
    const launcherImagesSeen = launcherImages(pods, 'demo-vm');
    expect(launcherImagesSeen.length).toBeGreaterThanOrEqual(2);
    expect(launcherImagesSeen.filter((image) => !image.includes('virt-launcher') || image === SIMULATED_IMAGE)).toEqual([]);

    // The VM reached Running on a simulated (kwok) node with an address from the configured CIDR.
    const simulated = new Set(
      [...nodes.seen.values()]
        .flat()
        .filter((n) => n.metadata.annotations?.['kwok.x-k8s.io/node'] === 'fake')
        .map((n) => n.metadata.name),
    );
    expect(simulated.size).toBeGreaterThanOrEqual(2);
    const running = vms
      .of('demo-vm')
      .flatMap((v) => (v.status?.phase === 'Running' && v.status.nodeName && v.status.ipAddress ? [{ node: v.status.nodeName, ip: v.status.ipAddress }] : []));
    expect(running.length).toBeGreaterThan(0);
    for (const v of running) {
      expect(simulated.has(v.node)).toBe(true);
      const subnet = parseSubnet(VM_CIDR);
      const ip = parseIPv4(v.ip);
      expect(subnet !== undefined && ip !== undefined && contains(subnet, ip)).toBe(true);
    }
    // The image was imported over HTTP into DVCR (the registry the platform runs) with its progress
    // reported on the way, the disk filled from it; the VM booted from that disk.
    const dvcr = /DVCR: docker-registry at http:\/\/(127\.0\.0\.1:\d+)/.exec(output)?.[1];
    expect(dvcr).toBeDefined();
    const image = images.of('demo-image');
    expect(image.at(-1)?.status).toMatchObject({ phase: 'Ready', format: 'qcow2', progress: '100%', size: { unpackedBytes: String(64 * 1024 * 1024) } });
    expect(image.at(-1)?.status?.target?.registryURL?.startsWith(`${dvcr ?? '?'}/vi/demo/demo-image`)).toBe(true);
    const percents = image.map((i) => Number.parseFloat(i.status?.progress ?? '')).filter((p) => Number.isFinite(p));
    expect(percents.some((p) => p > 0 && p < 100)).toBe(true);
    expect(disks.of('demo-root').at(-1)?.status).toMatchObject({ phase: 'Ready', capacity: '1Gi' });
    expect(vms.of('demo-vm').some((v) => v.status?.phase === 'Running')).toBe(true);
    // Its importer pods were placed on the simulated nodes by the scheduler and run by the storage
    // simulator (a loopback pod IP), not by kwok (which would have given one of the nodes' pod CIDR).
    const helpers = [...pods.seen.entries()].filter(([name]) => name.startsWith('d8v-')).map(([, seen]) => seen);
    expect(helpers.length).toBeGreaterThanOrEqual(2);
    for (const seen of helpers) {
      const last = seen.at(-1);
      expect(last?.status?.phase).toBe('Succeeded');
      expect(simulated.has(last?.spec?.nodeName ?? '')).toBe(true);
      expect(last?.status?.podIP).toMatch(/^127\./);
    }
    expect(output).toMatch(/✓ image demo-image Ready in \d+\.\d s: qcow2/);
    // The data disk hot-plugged into the running VM: Attached once the simulator's virt-api reported the volume Ready.
    expect(output).toMatch(/✓ demo-data hot-plugged: attachment Attached/);
    expect(output).not.toMatch(/not built yet/);

    // The Restart and the Migrate operations completed; the migration moved the VM to another node.
    for (const name of ['restart-demo-vm', 'migrate-demo-vm']) {
      expect(ops.of(name).map((o) => o.status?.phase)).toContain('Completed');
    }
    expect(new Set(running.map((v) => v.node)).size).toBeGreaterThanOrEqual(2);
    expect(vms.of('demo-vm').some((v) => v.status?.phase === 'Migrating')).toBe(true);

    // The audit function emitted the records of the create, the restart and the refusal.
    const records = (await readFile(join(workDir, 'units', 'audit.log'), 'utf8'))
      .split('\n')
      .filter((l) => l.startsWith('{"type":'))
      .map((l) => JSON.parse(l) as { type: string; name: string; operation_result: string; request_subject: string });
    const named = (prefix: string): { type: string; operation_result: string } | undefined => records.find((r) => r.name.startsWith(prefix));
    expect(named("Virtual machine 'demo-vm' has been created by 'alice'")).toMatchObject({ type: 'Manage VM', operation_result: 'allow' });
    expect(named("Virtual machine 'demo-vm' has been restarted by 'alice'")).toMatchObject({ type: 'Control VM', operation_result: 'allow' });
    expect(named("User 'bob' attempted to perform a forbidden operation 'create' on resource 'virtualmachineoperations/demo'")).toMatchObject({
      type: 'Forbidden operation',
      operation_result: 'forbid',
    });
    // Nobody but the demo's users: the simulator, kwok and the garbage collector kill no launcher pod.
    expect(records.filter((r) => r.name.includes('killed abnormal way'))).toEqual([]);

    // route-forge routed the demo VM's address (in a network namespace as root, else as a dry run).
    const routeForgeLog = await readFile(join(workDir, 'units', 'route-forge.log'), 'utf8');
    expect(routeForgeLog).toMatch(/"msg":"(changes applied|dry run: changes not applied)"/);
    expect(running.some((v) => routeForgeLog.includes(`${v.ip}/32`) || routeForgeLog.includes(`${v.ip} `))).toBe(true);

    // virtualization-dra's USB/IP gateway (kernel side simulated) proved the controller's shared secret
    // and marked its node: free vhci ports, its address.
    const draLog = await readFile(join(workDir, 'units', 'dra.log'), 'utf8');
    expect(draLog).toMatch(/"authentication":"shared-secret".*"msg":"USB\/IP server listening"/);
    const marked = [...nodes.seen.values()].flat().find((n) => n.metadata.labels?.['virtualization.deckhouse.io/usb-gateway'] === 'true');
    expect(marked?.metadata.annotations?.['usb.virtualization.deckhouse.io/usbip-address']).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(output).toMatch(/USB\/IP gateway of dra \(kernel side SIMULATED\)/);

    // The pool of 3, one member removed by d8v scaledownwith: 2 kept, not replaced.
    expect(output).toMatch(/✓ pool demo-pool: 3 of 3 Running/);
    expect(output).toMatch(/✓ pool demo-pool: replicas 3 → 2, demo-pool-\w{5}, demo-pool-\w{5} kept, demo-pool-\w{5} not replaced/);

    // A drain-like eviction of demo-vm's launcher pod: refused by the eviction interceptor, the VM
    // evacuated by the controller's one Evict operation; then a Start superseded by a Stop.
    expect(output).toMatch(
      /✓ refused \(429\): admission webhook "virt-launcher-eviction-interceptor\.kubevirt\.io" denied the request: Eviction triggered evacuation of VMI "demo\/demo-vm"/,
    );
    expect(output).toMatch(/✓ evacuated by evacuation-\w{5} \(Evict\): (node-\d) → (?!\1)node-\d, EvictionRequired gone/);
    const evacuations = new Set([...ops.seen.keys()].filter((k) => k.startsWith('evacuation-')));
    expect(evacuations.size).toBe(1);
    expect(ops.of('start-demo-pinned').map((o) => o.status?.phase)).toContain('Superseded');
    expect(ops.of('stop-demo-pinned').map((o) => o.status?.phase)).toContain('Completed');

    // The command printed the time to Running, and every process it started is gone.
    expect(output).toMatch(/time from npm start to the demo VM Running: \d+\.\d s/);
    const children = recordedChildren(workDir).map((c) => c.name);
    expect(children).toEqual(
      expect.arrayContaining([
        'etcd',
        'kube-apiserver',
        'kube-controller-manager',
        'kube-scheduler',
        'kwok',
        'controller',
        'admission',
        'audit',
        'kubevirt-simulator',
        'kubevirt-api-rewriter',
        'virt-api',
        'virt-controller',
        'storage-simulator',
        'dvcr',
        'route-forge',
        'dra',
      ]),
    );
    expect(survivors(workDir)).toEqual([]);
  }, 420_000);

  it('stops everything with a non-zero exit, naming the unit and its log, when a unit dies (KubeVirt simulated: its binaries missing)', async () => {
    const workDir = await mkdtemp(join(base, 'platform-crash-'));
    leftovers.push(workDir);
    // No KubeVirt binaries where the platform looks: it falls back to the full simulator and says how to build them.
    const run = npmStart(['--no-demo', '--work-dir', workDir], { VIRT_TESTENV_KUBEVIRT_DIR: join(workDir, 'no-kubevirt') });
    try {
      await run.line(/platform ready in/, 180_000);
      const controller = recordedChildren(workDir).find((c) => c.name === 'controller');
      expect(controller).toBeDefined();
      process.kill(controller?.pid ?? 0, 'SIGKILL');
      const code = await run.exited;
      expect({ code, output: code === 1 ? '' : run.tail() }).toEqual({ code: 1, output: '' });
    } finally {
      run.interrupt();
      await run.exited;
    }
    expect(run.lines.join('\n')).toMatch(
      /KubeVirt: SIMULATED .*virt-controller and virt-api not built in .*no-kubevirt; build them with `bash tests\/env\/build-kubevirt\.sh`/,
    );
    expect(recordedChildren(workDir).map((c) => c.name)).not.toContain('virt-controller');
    const failure = run.lines.find((l) => l.includes('FAILED'));
    expect(failure).toContain('controller exited unexpectedly');
    expect(failure).toContain(join(workDir, 'units', 'controller.log'));
    expect(survivors(workDir)).toEqual([]);
  }, 240_000);

  it('fails fast and leaves nothing behind when the control plane cannot start', async () => {
    const workDir = await mkdtemp(join(base, 'platform-broken-'));
    leftovers.push(workDir);
    // The cached binaries, but a kube-apiserver that dies at once.
    const binDir = join(workDir, 'bin');
    await mkdir(binDir);
    for (const f of await readdir(getTestEnv().binDir)) if (f !== 'kube-apiserver') await symlink(join(getTestEnv().binDir, f), join(binDir, f));
    await writeFile(join(binDir, 'kube-apiserver'), '#!/bin/sh\necho "simulated failure: cannot start" >&2\nexit 1\n');
    await chmod(join(binDir, 'kube-apiserver'), 0o755);
    const run = npmStart(['--no-demo', '--work-dir', join(workDir, 'run')], { VIRT_TESTENV_BIN_DIR: binDir });
    expect(await run.exited).toBe(1);
    const failure = run.lines.find((l) => l.includes('FAILED')) ?? '';
    expect(failure).toMatch(/kube-apiserver exited early \(log .*kube-apiserver-\d+-1\.log\)/);
    expect(run.lines.join('\n')).toContain('simulated failure: cannot start');
    await waitFor('etcd gone', () => survivors(join(workDir, 'run')).length === 0, { timeoutMs: 10_000 });
  }, 120_000);

  it('stops what a platform killed with SIGKILL left running, at the next start', async () => {
    const workDir = await mkdtemp(join(base, 'platform-killed-'));
    leftovers.push(workDir);
    const run = npmStart(['--no-demo', '--work-dir', workDir]);
    await run.line(/platform ready in/, 180_000);
    const { platformPid } = JSON.parse(await readFile(join(workDir, 'platform.json'), 'utf8')) as { platformPid: number };
    process.kill(platformPid, 'SIGKILL');
    await run.exited;
    const recorded = recordedChildren(workDir);
    expect(survivors(workDir).length).toBeGreaterThan(5);
    // The next start (here one that fails at once on its flags' kubeconfig) finds them first.
    const next = npmStart(['--work-dir', workDir, '--kubeconfig', join(workDir, 'missing.kubeconfig')]);
    expect(await next.exited).toBe(1);
    expect(next.lines.filter((l) => l.includes('left running by a platform that was killed')).length).toBeGreaterThan(5);
    // Also what the units started in their process groups (route-forge's `ip monitor`).
    await waitFor('the leftovers gone', () => survivors(workDir, recorded).length === 0, { timeoutMs: 10_000 });
  }, 240_000);

  it('documents every flag in --help and refuses unknown ones with exit code 2', async () => {
    const help = npmStart(['--help']);
    expect(await help.exited).toBe(0);
    const text = help.lines.join('\n');
    for (const flag of ['--demo', '--no-demo', '--exit-after-demo', '--kubeconfig', '--nodes', '--vm-cidr', '--work-dir', '--keep', '--plain', '--help']) {
      expect(text).toContain(flag);
    }
    const readme = await readFile(join(REPO, 'README.md'), 'utf8');
    const flags = [...text.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1] ?? '');
    expect(flags.length).toBeGreaterThanOrEqual(10);
    for (const flag of flags) expect(readme).toContain(`\`${flag}`);
    const bad = npmStart(['--frobnicate']);
    expect(await bad.exited).toBe(2);
    expect(bad.lines.join('\n')).toContain('unknown flag --frobnicate');
  }, 60_000);
});
