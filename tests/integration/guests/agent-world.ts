/**
 * The node agent with real guests against the real apiserver, as the guest tests set it up: the test
 * plays virt-controller and the kubelet (an instance scheduled to a node, its running launcher pod, a
 * claim bound to a directory volume holding a disk image, as the storage simulator leaves it), the
 * simulator in role `node-agent` with the QEMU backend plays virt-handler, and the virt-api stand-in
 * serves the guests' console and screen. Also the console and VNC clients the tests read them with.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { CREATED_BY_LABEL, DOMAIN_ANNOTATION, LAUNCHER_LABEL, LAUNCHER_VALUE, VM_NAME_LABEL } from '../../../shared/api/internal/launcher.js';
import { INTERNAL_API_VERSION, type InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import { KubeClient } from '../../../shared/kube/index.js';
import type { Logger } from '../../../shared/log/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { GuestBackend } from '../../../platform/simulators/kubevirt-simulator/qemu/backend.js';
import { readMemAvailableMiB } from '../../../platform/simulators/kubevirt-simulator/qemu/host-memory.js';
import { simulatorClients } from '../../../platform/simulators/kubevirt-simulator/kube.js';
import { KubeVirtSimulator } from '../../../platform/simulators/kubevirt-simulator/simulator.js';
import { VirtApiStandIn } from '../../../platform/simulators/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import { kubevirtVolumes } from '../../../platform/simulators/kubevirt-simulator/virt-api/volumes.js';
import { freshNamespace, newKubeConfig } from '../../env/index.js';
import { rfbFrame, type RfbFrame } from './rfb-frame.js';

type VMI = InternalVirtualMachineInstance;

export interface AgentWorld {
  readonly kube: KubeClient;
  readonly ns: string;
  /** The node the instances are scheduled to. */
  readonly node: string;
  readonly work: string;
  /** The demo guest's disk image (tests/env/build-guest-image.sh). */
  readonly image: string;
  readonly backend: GuestBackend;
  /** What the backend takes as this machine's available memory: MemAvailable unless a test sets `availableMiB`. */
  readonly hostMemory: { availableMiB?: number | undefined };
  readonly virtApi: VirtApiStandIn;
  readonly c: ReturnType<typeof simulatorClients>;
  /** Another node the agent serves (a migration's target). */
  addNode(name: string): Promise<string>;
  /** A launcher pod of the instance, running on `node` (the instance's own, or a migration's target pod). */
  runningPod(vmi: VMI, podName: string, node: string): Promise<void>;
  /** What the storage simulator leaves for claim `name`: a PersistentVolume on directory `dir` (made if missing) and the claim bound to it. */
  boundClaim(name: string, dir: string): Promise<void>;
  /** What virt-controller, the scheduler, kubelet and the storage simulator leave: a volume, its claim, the scheduled instance and its running pod. */
  scheduledInstance(name: string, disk: string, memory?: string): Promise<VMI>;
  instance(name: string): Promise<VMI>;
  /** The console WebSocket URL of VM `name`. */
  consoleUrl(name: string): string;
  stop(): Promise<void>;
}

/** Start the world in a fresh namespace; `migrationBandwidth` caps live migrations (bytes/s). */
export async function startAgentWorld(opts: { qemu: string; log: Logger; prefix: string; migrationBandwidth?: number }): Promise<AgentWorld> {
  const work = mkdtempSync(join(tmpdir(), `${opts.prefix}-`));
  const image = join(execFileSync('bash', ['tests/env/build-guest-image.sh'], { encoding: 'utf8' }).trim(), 'disk.img');
  const kube = new KubeClient(newKubeConfig());
  const c = simulatorClients(kube);
  const ns = await freshNamespace(opts.prefix);
  const addNode = async (name: string): Promise<string> => {
    await c.nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'guests-test': ns } } });
    return name;
  };
  const node = await addNode(`guest-node-${ns}`);
  const hostMemory: { availableMiB?: number | undefined } = {};
  const backend = new GuestBackend({
    qemu: opts.qemu,
    workDir: join(work, 'guests'),
    memoryCapMiB: 256,
    shutdownGraceMs: 60_000,
    migrationBandwidth: opts.migrationBandwidth,
    memAvailableMiB: async () => hostMemory.availableMiB ?? (await readMemAvailableMiB()),
    log: opts.log,
  });
  const simulator = new KubeVirtSimulator(kube, { role: 'node-agent', namespace: ns, nodeSelector: `guests-test=${ns}`, guests: backend, logger: opts.log });
  await simulator.start();
  const virtApi = new VirtApiStandIn({
    port: 0,
    log: opts.log,
    guests: backend,
    // As npm start wires it: a VM with a real guest here is attached by the node agent.
    volumes: kubevirtVolumes(c.kvvmis, { realGuest: (namespace, name) => backend.byVm(namespace, name)?.running === true }),
  });
  await virtApi.start();

  const runningPod = async (vmi: VMI, podName: string, onNode: string): Promise<void> => {
    const name = vmi.metadata.name ?? '';
    await c.pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: podName,
        namespace: ns,
        labels: { [LAUNCHER_LABEL]: LAUNCHER_VALUE, [CREATED_BY_LABEL]: vmi.metadata.uid ?? '', [VM_NAME_LABEL]: name },
        annotations: { [DOMAIN_ANNOTATION]: name },
      },
      spec: { nodeName: onNode, containers: [{ name: 'compute', image: 'virt-launcher' }] },
    });
    await c.pods.patchStatus({ namespace: ns, name: podName }, { phase: 'Running', podIP: '10.244.1.7' });
  };

  const boundClaim = async (name: string, dir: string): Promise<void> => {
    mkdirSync(dir, { recursive: true });
    const pv = `pv-${ns}-${name}`;
    await c.pvs.create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pv },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: dir }, storageClassName: 'manual' },
    });
    await c.pvcs.create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: ns },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: pv, storageClassName: 'manual' },
    });
  };

  const scheduledInstance = async (name: string, disk: string, memory = '256Mi'): Promise<VMI> => {
    const dir = join(work, 'volumes', name);
    mkdirSync(dir, { recursive: true });
    copyFileSync(disk, join(dir, 'disk.img'));
    await boundClaim(`vd-${name}`, dir);
    const vmi = await c.kvvmis.create({
      apiVersion: INTERNAL_API_VERSION,
      kind: 'InternalVirtualizationVirtualMachineInstance',
      // A finalizer of virt-controller's keeps the deleted instance until the test lets it go.
      metadata: { name, namespace: ns, finalizers: ['guests-test/hold'] },
      spec: {
        domain: { cpu: { cores: 1 }, memory: { guest: memory }, devices: { disks: [{ name: 'root', disk: { bus: 'virtio' }, bootOrder: 1 }] } },
        volumes: [{ name: 'root', persistentVolumeClaim: { claimName: `vd-${name}` } }],
      },
    });
    await runningPod(vmi, `virt-launcher-${name}-abcde`, node);
    return c.kvvmis.mergePatch({ namespace: ns, name }, { status: { phase: 'Scheduled', nodeName: node } });
  };

  return {
    kube,
    ns,
    node,
    work,
    image,
    backend,
    hostMemory,
    virtApi,
    c,
    addNode,
    runningPod,
    boundClaim,
    scheduledInstance,
    instance: (name) => c.kvvmis.get({ namespace: ns, name }),
    consoleUrl: (name) => `${virtApi.url}/apis/subresources.kubevirt.io/v1/namespaces/${ns}/virtualmachineinstances/${name}/console`,
    async stop() {
      await virtApi.stop();
      await simulator.stop();
      await backend.stopAll();
      kube.close();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** The instance once `probe` holds for it; an instance that fails on the way stops the wait at once, with its reason. */
export function instanceWhen(world: AgentWorld, name: string, what: string, probe: (v: VMI) => boolean, timeoutMs: number): Promise<VMI> {
  let failed: string | undefined;
  return waitFor(
    what,
    async () => {
      const v = await world.instance(name);
      if (probe(v)) return v;
      if (v.status?.phase === 'Failed') failed = `the instance failed (${v.status.reason ?? 'no reason'})`;
      return undefined;
    },
    { timeoutMs, intervalMs: 500, abortIf: () => failed },
  );
}

export const conditionOf = (vmi: VMI, type: string): { status: string; reason?: string | undefined } | undefined =>
  vmi.status?.conditions?.find((k) => k.type === type);

/**
 * A console session through the console WebSocket: everything the guest printed since it opened, a
 * way to type, and a wait for a pattern (pressing Enter every 2 s while waiting, as a person would).
 */
export interface ConsoleSession {
  text(): string;
  type(line: string): void;
  until(pattern: RegExp, timeoutMs: number, opts?: { enter?: boolean }): Promise<string>;
  close(): void;
}

export async function openConsole(url: string): Promise<ConsoleSession> {
  const ws = await openSocket(url);
  let text = '';
  ws.on('message', (b: Buffer) => (text += b.toString('utf8')));
  return {
    text: () => text,
    type: (line) => ws.send(Buffer.from(line), { binary: true }),
    until: (pattern, timeoutMs, o = {}) =>
      waitFor(
        `the console to show ${String(pattern)} (it showed ${JSON.stringify(text.slice(-200))} when the wait began)`,
        () => {
          if (ws.readyState !== ws.OPEN) throw new Error(`the console WebSocket closed; it showed: ${text.slice(-300)}`);
          if (pattern.test(text)) return text;
          if (o.enter !== false) ws.send(Buffer.from('\r'), { binary: true });
          return undefined;
        },
        { timeoutMs, intervalMs: 2000 },
      ),
    close: () => ws.close(),
  };
}

/** Everything the console WebSocket carries until `pattern` shows (Enter is pressed first, as a person would). */
export async function consoleUntil(url: string, pattern: RegExp, timeoutMs: number): Promise<string> {
  const session = await openConsole(url);
  try {
    return await session.until(pattern, timeoutMs);
  } finally {
    session.close();
  }
}

/** One full frame through the vnc WebSocket. */
export async function vncFrame(url: string): Promise<RfbFrame> {
  const ws = await openSocket(url);
  let got = Buffer.alloc(0);
  ws.on('message', (b: Buffer) => (got = Buffer.concat([got, b])));
  try {
    return await rfbFrame({ send: (b) => ws.send(b), received: () => got });
  } finally {
    ws.close();
  }
}

function openSocket(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), 'plain.kubevirt.io');
  return new Promise((resolve, reject) => ws.once('open', () => resolve(ws)).once('error', reject));
}

/** A root shell on a guest's serial console: `run` types a command and returns what the console showed after it. */
export interface GuestShell {
  run(command: string, timeoutMs?: number): Promise<string>;
  close(): void;
}

/**
 * Boot instance `name` from the demo image and log in as root on its serial console (the image's root
 * has no password). Each command's end is a marker the guest computes, so the typed line never matches it.
 */
export async function bootToShell(world: AgentWorld, name: string, bootMs: number): Promise<GuestShell> {
  await world.scheduledInstance(name, world.image);
  await instanceWhen(world, name, 'the instance Running', (v) => v.status?.phase === 'Running', 60_000);
  const session = await openConsole(world.consoleUrl(name));
  await session.until(/d8v-demo login: /, bootMs);
  session.type('root\r');
  // busybox ash ends its prompt with a cursor-position query (ESC [6n).
  await session.until(/\/root # /, 90_000, { enter: false });
  let marks = 1000;
  return {
    async run(command, timeoutMs = 90_000) {
      const n = marks++;
      const from = session.text().length;
      session.type(`${command}; echo "mark-$((${n}+1))"\r`);
      await session.until(new RegExp(`mark-${n + 1}\\r?\\n`), timeoutMs, { enter: false });
      return session.text().slice(from);
    },
    close: () => session.close(),
  };
}

/**
 * One world and one guest booted to a root shell for a whole test file (set up in `beforeAll`, stopped
 * in `afterAll`); the tests read `world` and `shell` once the set-up ran.
 */
export function useBootedGuest(opts: { qemu: string; log: Logger; prefix: string; vm: string; bootMs: number }): {
  readonly world: AgentWorld;
  readonly shell: GuestShell;
} {
  const held: { world?: AgentWorld; shell?: GuestShell } = {};
  beforeAll(async () => {
    held.world = await startAgentWorld({ qemu: opts.qemu, log: opts.log, prefix: opts.prefix });
    held.shell = await bootToShell(held.world, opts.vm, opts.bootMs);
  }, opts.bootMs + 120_000);
  afterAll(async () => {
    held.shell?.close();
    await held.world?.stop();
  });
  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`the booted guest's ${what} is not set up (its beforeAll failed)`);
    return v;
  };
  return {
    get world() {
      return need(held.world, 'world');
    },
    get shell() {
      return need(held.shell, 'shell');
    },
  };
}
