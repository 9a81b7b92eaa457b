/**
 * The node agent's QEMU backend with real guests: the demo image (tests/env/build-guest-image.sh)
 * boots to a login prompt on its serial console, its guest agent reports the OS, a stop (ACPI
 * power-down) ends QEMU by itself within the grace period and leaves no process, and a disk that does not boot is reported as NoBootableDevice. Fails, saying
 * so, where qemu-system-x86_64 is not installed (npm test installs it).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InternalVirtualMachineInstanceSchema } from '../../../shared/api/internal/resources.js';
import { rootLogger } from '../../../shared/log/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { makeImage } from '../../../shared/testing/disk-images.js';
import { GuestBackend } from '../../../platform/simulators/kubevirt-simulator/qemu/backend.js';
import { requireQemu } from './qemu.js';

const qemu = await requireQemu();
const BOOT_TIMEOUT = 240_000;

function vmi(name: string, uid: string, memory = '256Mi'): ReturnType<typeof InternalVirtualMachineInstanceSchema.parse> {
  return InternalVirtualMachineInstanceSchema.parse({
    apiVersion: 'internal.virtualization.deckhouse.io/v1',
    kind: 'InternalVirtualizationVirtualMachineInstance',
    metadata: { name, namespace: 'guests', uid },
    spec: {
      domain: { cpu: { cores: 1 }, memory: { guest: memory }, devices: { disks: [{ name: 'root', disk: { bus: 'virtio' }, bootOrder: 1 }] } },
      volumes: [{ name: 'root', persistentVolumeClaim: { claimName: `vd-${name}` } }],
    },
  });
}

/** Everything the serial console says until `pattern` shows, after sending `send`. */
async function readConsole(socketPath: string, send: string, pattern: RegExp): Promise<string> {
  const socket = createConnection(socketPath);
  let text = '';
  socket.on('data', (b: Buffer) => (text += b.toString('utf8')));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(send);
  try {
    return await waitFor('the console to show ' + String(pattern), () => (pattern.test(text) ? text : undefined), { timeoutMs: 60_000 });
  } finally {
    socket.destroy();
  }
}

describe('the QEMU guest backend of the node agent', () => {
  const work = mkdtempSync(join(tmpdir(), 'guests-'));
  const backend = new GuestBackend({
    qemu,
    workDir: join(work, 'guests'),
    memoryCapMiB: 256,
    shutdownGraceMs: 10_000,
    log: rootLogger.child({ component: 'guests-test' }),
  });
  let image = '';

  beforeAll(() => {
    const dir = execFileSync('bash', ['tests/env/build-guest-image.sh'], { encoding: 'utf8' }).trim();
    image = join(dir, 'disk.img');
  }, 300_000);
  afterAll(async () => {
    await backend.stopAll();
    rmSync(work, { recursive: true, force: true });
  });

  test(
    'the demo image boots to a login prompt, its agent reports the OS, and a stop powers it down cleanly, leaving no QEMU process',
    async () => {
      const disk = join(work, 'demo.img');
      copyFileSync(image, disk);
      const started = Date.now();
      const guest = await backend.ensure(vmi('demo', 'uid-demo', '1Gi'), [{ name: 'root', file: disk, format: 'raw' }]);
      expect(guest.plan).toMatchObject({ memoryMiB: 1024, givenMiB: 256, capped: true, cpus: 1 });
      await waitFor('the login prompt', () => guest.loginPrompt(), {
        timeoutMs: BOOT_TIMEOUT,
        intervalMs: 250,
        abortIf: () => (guest.running ? undefined : 'QEMU exited'),
      });
      const toLogin = Date.now() - started;
      rootLogger.info({ toLoginMs: toLogin, accel: guest.accel }, 'demo guest: time to login prompt');
      expect(await readConsole(guest.serialSocket, '\r', /d8v-demo login: /)).toContain('login:');

      const report = await waitFor('the guest agent', () => guest.agentReport(), { timeoutMs: 60_000, intervalMs: 500 });
      expect(report.osInfo).toMatchObject({ id: 'debian', 'kernel-release': expect.stringMatching(/amd64$/) });
      expect(report.interfaces.flatMap((i) => i['ip-addresses'] ?? []).map((a) => a['ip-address'])).toContain('10.0.2.15');

      // The guest's acpid turns the ACPI power button into a poweroff: QEMU ends by itself within the grace period.
      const pid = guest.pid ?? 0;
      expect(await backend.end('uid-demo')).toBe('shutdown');
      expect(guest.exitStatus).toEqual({ code: 0, signal: null });
      expect(guest.running).toBe(false);
      expect(() => process.kill(pid, 0)).toThrow();
      expect(backend.get('uid-demo')).toBeUndefined();
    },
    BOOT_TIMEOUT + 120_000,
  );

  test('a disk that does not boot shows NoBootableDevice and never a login prompt', async () => {
    const blank = makeImage(work, 'blank.img', 'raw', 16, 4);
    const guest = await backend.ensure(vmi('blank', 'uid-blank'), [{ name: 'root', file: blank, format: 'raw' }]);
    const failure = await waitFor('the firmware to give up', () => guest.failure(), { timeoutMs: 120_000, intervalMs: 250 });
    expect(failure).toMatchObject({ reason: 'NoBootableDevice' });
    expect(await guest.loginPrompt()).toBe(false);
    await backend.end('uid-blank');
    expect(guest.running).toBe(false);
  }, 200_000);
});
