/**
 * The node agent with real guests, against the real apiserver: the test plays virt-controller and the
 * kubelet (an instance scheduled to a node, its running launcher pod, a claim bound to a directory
 * volume holding the demo image, as the storage simulator leaves it), the simulator in role
 * `node-agent` with the QEMU backend plays virt-handler. The instance reaches Running on a QEMU
 * process, the guest agent's answers come up as AgentConnected and guestOSInfo, the login prompt and a
 * non-blank screen come through the virt-api stand-in's console and vnc WebSockets, and a deleted
 * instance powers its guest down by ACPI before the grace period ends (QEMU exits 0, no kill). Bad
 * input: a blank disk shows NoBootableDevice; QEMU killed under a running instance fails it.
 * Fails, saying so, where qemu-system-x86_64 is not installed (npm test installs it).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { CREATED_BY_LABEL, DOMAIN_ANNOTATION, LAUNCHER_LABEL, LAUNCHER_VALUE, VM_NAME_LABEL } from '../../../shared/api/internal/launcher.js';
import { INTERNAL_API_VERSION, type InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { makeImage } from '../../../shared/testing/disk-images.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { GuestBackend } from '../../../platform/simulators/kubevirt-simulator/qemu/backend.js';
import { simulatorClients } from '../../../platform/simulators/kubevirt-simulator/kube.js';
import { KubeVirtSimulator } from '../../../platform/simulators/kubevirt-simulator/simulator.js';
import { VirtApiStandIn } from '../../../platform/simulators/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import { freshNamespace, newKubeConfig } from '../../env/index.js';
import { rfbFrame, type RfbFrame } from './rfb-frame.js';
import { requireQemu } from './qemu.js';

const qemu = await requireQemu();
const BOOT_MS = 240_000;
const log = rootLogger.child({ component: 'guests-node-agent-test' });

describe('the node agent with real QEMU guests', () => {
  const work = mkdtempSync(join(tmpdir(), 'guests-agent-'));
  let kube: KubeClient;
  let ns = '';
  let node = '';
  let backend: GuestBackend;
  let simulator: KubeVirtSimulator;
  let virtApi: VirtApiStandIn;
  let image = '';
  const c = (): ReturnType<typeof simulatorClients> => simulatorClients(kube);

  beforeAll(async () => {
    image = join(execFileSync('bash', ['tests/env/build-guest-image.sh'], { encoding: 'utf8' }).trim(), 'disk.img');
    kube = new KubeClient(newKubeConfig());
    ns = await freshNamespace('guests');
    node = `guest-node-${ns}`;
    await c().nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: node, labels: { 'guests-test': ns } } });
    backend = new GuestBackend({ qemu, workDir: join(work, 'guests'), memoryCapMiB: 256, shutdownGraceMs: 60_000, log });
    simulator = new KubeVirtSimulator(kube, { role: 'node-agent', namespace: ns, nodeSelector: `guests-test=${ns}`, guests: backend, logger: log });
    await simulator.start();
    virtApi = new VirtApiStandIn({ port: 0, log, guests: backend });
    await virtApi.start();
  }, 300_000);

  afterAll(async () => {
    await virtApi.stop();
    await simulator.stop();
    await backend.stopAll();
    kube.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** What virt-controller, the scheduler, kubelet and the storage simulator leave: a volume, its claim, the scheduled instance and its running pod. */
  async function scheduledInstance(name: string, disk: string, memory = '256Mi'): Promise<InternalVirtualMachineInstance> {
    const dir = join(work, 'volumes', name);
    mkdirSync(dir, { recursive: true });
    copyFileSync(disk, join(dir, 'disk.img'));
    const pv = `pv-${ns}-${name}`;
    await c().pvs.create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pv },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: dir }, storageClassName: 'manual' },
    });
    await c().pvcs.create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: `vd-${name}`, namespace: ns },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: pv, storageClassName: 'manual' },
    });
    const vmi = await c().kvvmis.create({
      apiVersion: INTERNAL_API_VERSION,
      kind: 'InternalVirtualizationVirtualMachineInstance',
      // A finalizer of virt-controller's keeps the deleted instance until the test lets it go.
      metadata: { name, namespace: ns, finalizers: ['guests-test/hold'] },
      spec: {
        domain: { cpu: { cores: 1 }, memory: { guest: memory }, devices: { disks: [{ name: 'root', disk: { bus: 'virtio' }, bootOrder: 1 }] } },
        volumes: [{ name: 'root', persistentVolumeClaim: { claimName: `vd-${name}` } }],
      },
    });
    const pod = await c().pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `virt-launcher-${name}-abcde`,
        namespace: ns,
        labels: { [LAUNCHER_LABEL]: LAUNCHER_VALUE, [CREATED_BY_LABEL]: vmi.metadata.uid ?? '', [VM_NAME_LABEL]: name },
        annotations: { [DOMAIN_ANNOTATION]: name },
      },
      spec: { nodeName: node, containers: [{ name: 'compute', image: 'virt-launcher' }] },
    });
    await c().pods.patchStatus({ namespace: ns, name: pod.metadata.name ?? '' }, { phase: 'Running', podIP: '10.244.1.7' });
    return c().kvvmis.mergePatch({ namespace: ns, name }, { status: { phase: 'Scheduled', nodeName: node } });
  }

  const instance = (name: string): Promise<InternalVirtualMachineInstance> => c().kvvmis.get({ namespace: ns, name });
  const condition = (vmi: InternalVirtualMachineInstance, type: string): { status: string; reason?: string | undefined } | undefined =>
    vmi.status?.conditions?.find((k) => k.type === type);

  test(
    'an instance runs on a QEMU process from its disk: agent, console and screen are the guest own; deleting it powers the guest down cleanly',
    async () => {
      const started = Date.now();
      await scheduledInstance('demo', image, '1Gi');
      const running = await waitFor('the instance Running', async () => ((await instance('demo')).status?.phase === 'Running' ? instance('demo') : undefined), {
        timeoutMs: 60_000,
      });
      const guest = backend.byVm(ns, 'demo');
      expect(guest?.running).toBe(true);
      expect(guest?.plan).toMatchObject({ memoryMiB: 1024, givenMiB: 256, capped: true });
      expect(running.metadata.annotations?.['kubevirt-simulator.local/guest']).toContain('capped at 256 MiB');
      expect(running.metadata.annotations?.['versions.virtualization.deckhouse.io/qemu-version']).toMatch(/^\d+\.\d+\.\d+$/);

      const console = await consoleUntil(
        `${virtApi.url}/apis/subresources.kubevirt.io/v1/namespaces/${ns}/virtualmachineinstances/demo/console`,
        /d8v-demo login: /,
      );
      const toLogin = Date.now() - started;
      log.info({ toLoginMs: toLogin, accel: guest?.accel }, 'node agent guest: time to the login prompt through the console WebSocket');
      expect(console).toContain('d8v-demo login:');

      const withAgent = await waitFor(
        'AgentConnected and guestOSInfo',
        async () => {
          const v = await instance('demo');
          return condition(v, 'AgentConnected')?.status === 'True' && v.status?.guestOSInfo?.['id'] === 'debian' ? v : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 500 },
      );
      expect(withAgent.status?.guestOSInfo).toMatchObject({ id: 'debian', kernelRelease: expect.stringMatching(/amd64$/) });
      expect(withAgent.status?.interfaces?.[0]).toMatchObject({ ipAddress: '10.244.1.7', infoSource: 'domain, guest-agent' });

      const frame = await vncFrame(`${virtApi.url}/apis/subresources.kubevirt.io/v1/namespaces/${ns}/virtualmachineinstances/demo/vnc`);
      expect(frame.width).toBeGreaterThan(0);
      expect(frame.distinctPixels).toBeGreaterThan(1);

      const pid = guest?.pid ?? 0;
      await c().kvvmis.delete({ namespace: ns, name: 'demo' });
      await waitFor('the instance Succeeded', async () => (await instance('demo')).status?.phase === 'Succeeded', { timeoutMs: 90_000 });
      expect(guest?.exitStatus).toEqual({ code: 0, signal: null });
      expect(() => process.kill(pid, 0)).toThrow();
      expect(backend.byVm(ns, 'demo')).toBeUndefined();
      await c().kvvmis.mergePatch({ namespace: ns, name: 'demo' }, { metadata: { finalizers: null } });
    },
    BOOT_MS + 180_000,
  );

  test('a blank disk shows NoBootableDevice; QEMU killed under the running instance fails it', async () => {
    const blank = makeImage(work, 'blank.img', 'raw', 16, 4);
    await scheduledInstance('blank', blank);
    const noBoot = await waitFor(
      'GuestBootable False',
      async () => {
        const v = await instance('blank');
        return condition(v, 'GuestBootable')?.status === 'False' ? v : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(condition(noBoot, 'GuestBootable')).toMatchObject({ reason: 'NoBootableDevice' });
    expect(condition(noBoot, 'AgentConnected')).toBeUndefined();
    expect(noBoot.status?.phase).toBe('Running');

    const guest = backend.byVm(ns, 'blank');
    process.kill(guest?.pid ?? 0, 'SIGKILL');
    const failed = await waitFor('the instance Failed', async () => ((await instance('blank')).status?.phase === 'Failed' ? instance('blank') : undefined), {
      timeoutMs: 60_000,
    });
    expect(failed.status?.reason).toBe('GuestCrashed');
    expect(backend.byVm(ns, 'blank')).toBeUndefined();
    await c().kvvmis.mergePatch({ namespace: ns, name: 'blank' }, { metadata: { finalizers: null } });
  }, 200_000);
});

/** Everything the console WebSocket carries until `pattern` shows (Enter is pressed first, as a person would). */
async function consoleUntil(url: string, pattern: RegExp): Promise<string> {
  const ws = await openSocket(url);
  let text = '';
  ws.on('message', (b: Buffer) => (text += b.toString('utf8')));
  try {
    return await waitFor(
      `the console to show ${String(pattern)}`,
      () => {
        if (pattern.test(text)) return text;
        ws.send(Buffer.from('\r'), { binary: true });
        return undefined;
      },
      { timeoutMs: BOOT_MS, intervalMs: 2000 },
    );
  } finally {
    ws.close();
  }
}

/** One full frame through the vnc WebSocket. */
async function vncFrame(url: string): Promise<RfbFrame> {
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
