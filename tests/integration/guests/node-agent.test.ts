/**
 * The node agent with real guests, against the real apiserver (the set-up: agent-world.ts). The
 * instance reaches Running on a QEMU process, the guest agent's answers come up as AgentConnected and
 * guestOSInfo, the login prompt and a non-blank screen come through the virt-api stand-in's console
 * and vnc WebSockets, and a deleted instance powers its guest down by ACPI before the grace period
 * ends (QEMU exits 0, no kill). Bad input: a blank disk shows NoBootableDevice; QEMU killed under a
 * running instance fails it; a guest the machine has no memory for is refused (Synchronized=False,
 * InsufficientHostMemory, no QEMU process) and starts once there is room. Fails, saying so, where qemu-system-x86_64 is not installed (npm test
 * installs it).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { rootLogger } from '../../../shared/log/index.js';
import { makeImage } from '../../../shared/testing/disk-images.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { conditionOf, consoleUntil, instanceWhen, startAgentWorld, vncFrame, type AgentWorld } from './agent-world.js';
import { requireQemu } from './qemu.js';

const qemu = await requireQemu();
const BOOT_MS = 240_000;
const log = rootLogger.child({ component: 'guests-node-agent-test' });

describe('the node agent with real QEMU guests', () => {
  let w: AgentWorld;

  beforeAll(async () => {
    w = await startAgentWorld({ qemu, log, prefix: 'guests' });
  }, 300_000);

  afterAll(async () => {
    await w.stop();
  });

  test(
    'an instance runs on a QEMU process from its disk: agent, console and screen are the guest own; deleting it powers the guest down cleanly',
    async () => {
      const started = Date.now();
      await w.scheduledInstance('demo', w.image, '1Gi');
      const running = await instanceWhen(w, 'demo', 'the instance Running', (v) => v.status?.phase === 'Running', 60_000);
      const guest = w.backend.byVm(w.ns, 'demo');
      expect(guest?.running).toBe(true);
      expect(guest?.plan).toMatchObject({ memoryMiB: 1024, givenMiB: 256, capped: true });
      expect(running.metadata.annotations?.['kubevirt-simulator.local/guest']).toContain('capped at 256 MiB');
      expect(running.metadata.annotations?.['versions.virtualization.deckhouse.io/qemu-version']).toMatch(/^\d+\.\d+\.\d+$/);

      const console = await consoleUntil(w.consoleUrl('demo'), /d8v-demo login: /, BOOT_MS);
      const toLogin = Date.now() - started;
      log.info({ toLoginMs: toLogin, accel: guest?.accel }, 'node agent guest: time to the login prompt through the console WebSocket');
      expect(console).toContain('d8v-demo login:');

      const withAgent = await instanceWhen(
        w,
        'demo',
        'AgentConnected and guestOSInfo',
        (v) => conditionOf(v, 'AgentConnected')?.status === 'True' && v.status?.guestOSInfo?.['id'] === 'debian',
        90_000,
      );
      expect(withAgent.status?.guestOSInfo).toMatchObject({ id: 'debian', kernelRelease: expect.stringMatching(/amd64$/) });
      expect(withAgent.status?.interfaces?.[0]).toMatchObject({ ipAddress: '10.244.1.7', infoSource: 'domain, guest-agent' });

      const frame = await vncFrame(`${w.virtApi.url}/apis/subresources.kubevirt.io/v1/namespaces/${w.ns}/virtualmachineinstances/demo/vnc`);
      expect(frame.width).toBeGreaterThan(0);
      expect(frame.distinctPixels).toBeGreaterThan(1);

      const pid = guest?.pid ?? 0;
      await w.c.kvvmis.delete({ namespace: w.ns, name: 'demo' });
      await waitFor('the instance Succeeded', async () => (await w.instance('demo')).status?.phase === 'Succeeded', { timeoutMs: 90_000 });
      expect(guest?.exitStatus).toEqual({ code: 0, signal: null });
      expect(() => process.kill(pid, 0)).toThrow();
      expect(w.backend.byVm(w.ns, 'demo')).toBeUndefined();
      await w.c.kvvmis.mergePatch({ namespace: w.ns, name: 'demo' }, { metadata: { finalizers: null } });
    },
    BOOT_MS + 180_000,
  );

  test('a guest this machine has no memory for is refused with the figures, no QEMU process started; it starts once there is room', async () => {
    w.hostMemory.availableMiB = 900; // less than the capped 256 MiB, QEMU's own and the 1024 MiB reserve
    await w.scheduledInstance('crowd', w.image, '1Gi');
    const refused = await instanceWhen(w, 'crowd', 'Synchronized False', (v) => conditionOf(v, 'Synchronized')?.status === 'False', 60_000);
    expect(conditionOf(refused, 'Synchronized')).toMatchObject({ reason: 'InsufficientHostMemory' });
    expect((refused.status?.conditions ?? []).find((c) => c.type === 'Synchronized')?.message).toMatch(
      /cannot hold the guest of .*\/crowd now: it needs about \d+ MiB .* 900 MiB is available and 1024 MiB is kept/,
    );
    expect(refused.status?.phase).toBe('Scheduled');
    expect(w.backend.byVm(w.ns, 'crowd')).toBeUndefined();

    w.hostMemory.availableMiB = undefined; // the machine's own MemAvailable again: room on this 24 GiB machine
    const running = await instanceWhen(w, 'crowd', 'the instance Running', (v) => v.status?.phase === 'Running', 90_000);
    expect(conditionOf(running, 'Synchronized')).toBeUndefined();
    expect(w.backend.byVm(w.ns, 'crowd')?.running).toBe(true);
    await w.c.kvvmis.delete({ namespace: w.ns, name: 'crowd' });
    await waitFor('the instance Succeeded', async () => (await w.instance('crowd')).status?.phase === 'Succeeded', { timeoutMs: 90_000 });
    await w.c.kvvmis.mergePatch({ namespace: w.ns, name: 'crowd' }, { metadata: { finalizers: null } });
  }, 300_000);

  test('a blank disk shows NoBootableDevice; QEMU killed under the running instance fails it', async () => {
    const blank = makeImage(w.work, 'blank.img', 'raw', 16, 4);
    await w.scheduledInstance('blank', blank);
    const noBoot = await instanceWhen(w, 'blank', 'GuestBootable False', (v) => conditionOf(v, 'GuestBootable')?.status === 'False', 120_000);
    expect(conditionOf(noBoot, 'GuestBootable')).toMatchObject({ reason: 'NoBootableDevice' });
    expect(conditionOf(noBoot, 'AgentConnected')).toBeUndefined();
    expect(noBoot.status?.phase).toBe('Running');

    const guest = w.backend.byVm(w.ns, 'blank');
    process.kill(guest?.pid ?? 0, 'SIGKILL');
    const failed = await instanceWhen(w, 'blank', 'the instance Failed', (v) => v.status?.phase === 'Failed', 60_000);
    expect(failed.status?.reason).toBe('GuestCrashed');
    expect(w.backend.byVm(w.ns, 'blank')).toBeUndefined();
    await w.c.kvvmis.mergePatch({ namespace: w.ns, name: 'blank' }, { metadata: { finalizers: null } });
  }, 200_000);
});
