/**
 * The end-to-end part of the route-forge benchmark (BENCH_E2E=true), for information: a control
 * plane of its own holding the VMs (with status) and CiliumNodes, then the daemon process as it ships
 * (bundled), started against an empty table, until the table holds every route. This includes the
 * process start and the informers' list of every VM, which `ip -batch` does not do.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../shared/kube/index.js';
import { startNodeProcess } from '../../shared/runtime/testing/index.js';
import { CiliumNodeSchema, RoutedVmSchema, ciliumNodeDescriptor, vmDescriptor } from '../../daemons/route-forge/kube.js';
import { ensureBinaries } from '../env/binaries.js';
import { startControlPlane } from '../env/control-plane.js';
import { installCrds } from '../env/crds.js';
import { newKubeConfig } from '../env/index.js';
import { runKubectl } from '../env/kubectl.js';
import { CILIUM_NODE_CRD } from '../integration/route-forge/cluster.js';
import type { TestNetns } from '../../shared/testing/netns.js';
import { nowMs, pool, print, processMemoryMb } from './lib.js';
import { bundledArgs, cageFor } from './processes.js';

export interface EndToEndOptions {
  readonly routes: number;
  readonly nodes: number;
  readonly table: number;
  readonly cidr: string;
  readonly nodeIP: (i: number) => string;
  readonly vmIP: (i: number) => string;
  /** The `ip -batch` time of the same routes, for the ratio. */
  readonly baselineMs: number;
  /** Routes deleted by hand, one at a time, after convergence: the daemon's memory under drift. */
  readonly repairs: number;
}

/** What the daemon process did: start to a complete table, and its memory under drift. */
export interface EndToEndResult {
  readonly convergedMs: number;
  readonly memory: RepairMemory;
  /** Whether the daemon ran under its DaemonSet's memory limit (a memory cgroup). */
  readonly limited: boolean;
}

export async function runEndToEnd(ns: TestNetns, opts: EndToEndOptions): Promise<EndToEndResult> {
  const workDir = await mkdtemp(join(tmpdir(), 'bench-route-forge-'));
  const cp = await startControlPlane(await ensureBinaries(), workDir);
  const kube = new KubeClient(newKubeConfig(cp.state.kubeconfigPath));
  try {
    await installCrds(cp.state);
    for (const args of [
      ['apply', '--server-side', '-f', CILIUM_NODE_CRD],
      ['wait', '--for=condition=Established', '--timeout=60s', 'crd/ciliumnodes.cilium.io'],
      ['create', 'namespace', 'bench'],
    ]) {
      const res = await runKubectl(cp.state, args);
      if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
    }
    const nodes = kube.resource(ciliumNodeDescriptor, CiliumNodeSchema, 'bench');
    const vms = kube.resource(vmDescriptor, RoutedVmSchema, 'bench');
    for (let i = 0; i < opts.nodes; i++) {
      await nodes.create({ metadata: { name: `node-${i}` }, spec: { addresses: [{ type: 'CiliumInternalIP', ip: opts.nodeIP(i) }] } });
    }
    const setUpStart = nowMs();
    await pool(
      Array.from({ length: opts.routes }, (_, i) => async () => {
        const name = `vm-${i}`;
        await vms.create({
          metadata: { namespace: 'bench', name },
          spec: { virtualMachineClassName: 'generic', cpu: { cores: 1 }, memory: { size: '1Gi' }, blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'root' }] },
        });
        await vms.patchStatus({ namespace: 'bench', name }, { ipAddress: opts.vmIP(i), nodeName: `node-${i % opts.nodes}` });
      }),
      32,
    );
    print(`\n[e2e] ${opts.routes} VMs with status written in ${((nowMs() - setUpStart) / 1000).toFixed(1)} s`);
    await ns.ip(['route', 'flush', 'table', String(opts.table)]).catch(() => undefined);
    const args = await bundledArgs('daemons/route-forge/main.ts', 'bundled');
    const start = nowMs();
    const startEpoch = Date.now();
    // As the DaemonSet limits its container.
    const caged = cageFor('knative/daemons/route-forge/daemonset.yaml', 'route-forge');
    print(`[e2e] route-forge runs ${caged.note}`);
    const proc = startNodeProcess(args, {
      ...caged.start,
      env: {
        KUBECONFIG: cp.state.kubeconfigPath,
        NETNS: ns.name,
        VIRTUAL_MACHINE_CIDRS: opts.cidr,
        MODULE_CONFIG_WATCH: 'false',
        HEALTH_PORT: '0',
        METRICS_AUTH: 'none',
        LOG_LEVEL: 'info',
      },
    });
    try {
      let synced = 0;
      for (;;) {
        if ((await ns.table(opts.table)).length >= opts.routes + 1) break;
        if (synced === 0 && nowMs() - start > 120_000) throw new Error('route-forge did not converge within 120 s');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      synced = nowMs() - start;
      const at = (msg: string): string => {
        const time = proc.logs.find((r) => r['msg'] === msg)?.['time'];
        const epoch = typeof time === 'number' ? time : typeof time === 'string' ? Date.parse(time) : Number.NaN;
        return Number.isNaN(epoch) ? '?' : `${epoch - startEpoch} ms`;
      };
      print(
        `== daemon process start (bundled) -> ${opts.routes} routes in the table, apiserver list included ==\n` +
          `${synced.toFixed(0)} ms, ${(synced / opts.baselineMs).toFixed(1)}x the ip -batch baseline (${opts.baselineMs.toFixed(0)} ms); ` +
          `health server up at ${at('started: health and metrics served')}, informers synced at ${at('informers synced')}`,
      );
      return { convergedMs: synced, memory: await repairMemory(ns, proc.child.pid ?? 0, opts), limited: caged.cage !== undefined };
    } finally {
      print(`[e2e] route-forge's ${caged.usage()}`);
      proc.child.kill('SIGTERM');
      await proc.exited;
      caged.remove();
    }
  } finally {
    kube.close();
    await cp.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * The daemon's RSS at convergence, then after each of `opts.repairs` routes deleted by hand has come
 * back (targets: at convergence <= 150 MB for 10,000 routes; after 1,000 repairs within 10% of it).
 */
export interface RepairMemory {
  /** RSS (MB) at convergence, after the 20th repair, after the last, and the peak (VmHWM). */
  readonly converged: number;
  readonly after20: number;
  readonly after: number;
  readonly peak: number;
  readonly repairs: number;
}

async function repairMemory(ns: TestNetns, pid: number, opts: EndToEndOptions): Promise<RepairMemory> {
  const converged = processMemoryMb(pid);
  const samples: string[] = [];
  let after20 = Number.NaN;
  const start = nowMs();
  for (let k = 0; k < opts.repairs; k++) {
    const dst = `${opts.vmIP((k * 7919) % opts.routes)}/32`;
    await ns.ip(['route', 'del', dst, 'table', String(opts.table)]);
    while ((await ns.ip(['route', 'show', 'table', String(opts.table), dst])).trim() === '') {
      if (nowMs() - start > 60_000 + k * 1_000) throw new Error(`route-forge did not repair ${dst}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    if (k + 1 === 20) after20 = processMemoryMb(pid).rss;
    if (k + 1 === 20 || (k + 1) % 250 === 0 || k + 1 === opts.repairs) samples.push(`${k + 1}: ${processMemoryMb(pid).rss.toFixed(0)} MB`);
  }
  const after = processMemoryMb(pid);
  print(
    `== daemon RSS under drift (${opts.repairs} routes deleted by hand and repaired, one at a time) ==\n` +
      `at convergence ${converged.rss.toFixed(0)} MB (target <= 150 MB); after repairs ${samples.join(', ')}; ` +
      `${(after.rss / converged.rss).toFixed(2)}x convergence (target <= 1.10x); peak ${after.peak.toFixed(0)} MB`,
  );
  return { converged: converged.rss, after20, after: after.rss, peak: after.peak, repairs: opts.repairs };
}
