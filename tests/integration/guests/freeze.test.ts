/**
 * Freeze and thaw of a real guest the way a user asks for them: `d8v freeze` / `d8v unfreeze` through
 * the apiserver's aggregator, the subresources function and the virt-api stand-in (the wiring of
 * tests/integration/subresources/harness.ts) to the guest agent of a QEMU guest booted from the demo
 * image, whose `guest-fsfreeze-status` is read back. The guest thaws itself after the freeze's
 * `--unfreeze-timeout`. Bad input: a guest whose agent never answers (nothing booted) makes the freeze
 * fail with a message naming the guest agent, and the stand-in goes on serving. Fails, saying so,
 * where qemu-system-x86_64 is not installed (npm test installs it).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InternalVirtualMachineInstanceSchema } from '../../../shared/api/internal/resources.js';
import { rootLogger } from '../../../shared/log/index.js';
import { makeImage } from '../../../shared/testing/disk-images.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { GuestBackend } from '../../../platform/simulators/kubevirt-simulator/qemu/backend.js';
import type { QemuGuest } from '../../../platform/simulators/kubevirt-simulator/qemu/guest-process.js';
import { d8v } from '../cli/d8v.js';
import { startStack, stopCluster, type Stack } from '../subresources/harness.js';
import { requireQemu } from './qemu.js';

const qemu = await requireQemu();
const NS = `freeze-${randomBytes(3).toString('hex')}`;
const log = rootLogger.child({ component: 'guests-freeze-test' });

describe('freeze and thaw through the guest agent of a real guest', () => {
  const work = mkdtempSync(join(tmpdir(), 'guests-freeze-'));
  const backend = new GuestBackend({ qemu, workDir: join(work, 'guests'), memoryCapMiB: 256, shutdownGraceMs: 5_000, log });
  let stack: Stack;
  let admin = '';

  /** The VM in the cluster, Running, and its guest here: a QEMU process from `disk`. */
  async function vmWithGuest(name: string, disk: string): Promise<QemuGuest> {
    await stack.cluster.apply(
      JSON.stringify({
        apiVersion: 'virtualization.deckhouse.io/v1alpha2',
        kind: 'VirtualMachine',
        metadata: { name, namespace: NS },
        spec: {
          virtualMachineClassName: 'generic',
          runPolicy: 'AlwaysOn',
          cpu: { cores: 1, coreFraction: '100%' },
          memory: { size: '256Mi' },
          blockDeviceRefs: [{ kind: 'VirtualDisk', name: `${name}-root` }],
        },
      }),
    );
    const patched = await stack.cluster.kubectl([
      '-n',
      NS,
      'patch',
      'virtualmachine',
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Running"}}',
    ]);
    if (patched.code !== 0) throw new Error(`cannot set ${name} Running: ${patched.stderr}`);
    const vmi = InternalVirtualMachineInstanceSchema.parse({
      apiVersion: 'internal.virtualization.deckhouse.io/v1',
      kind: 'InternalVirtualizationVirtualMachineInstance',
      metadata: { name, namespace: NS, uid: `uid-${name}` },
      spec: {
        domain: { cpu: { cores: 1 }, memory: { guest: '256Mi' }, devices: { disks: [{ name: 'root', disk: { bus: 'virtio' }, bootOrder: 1 }] } },
        volumes: [{ name: 'root', persistentVolumeClaim: { claimName: `vd-${name}` } }],
      },
    });
    return backend.ensure(vmi, [{ name: 'root', file: disk, format: 'raw' }]);
  }

  beforeAll(async () => {
    // A generous timeout towards virt-api: a TCG guest's agent answers slowly on a busy machine.
    stack = await startStack('guests-freeze', { VIRT_API_TIMEOUT_MS: '60000' }, backend);
    admin = stack.cluster.apiserver.kubeconfigPath;
    await stack.cluster.apply(`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${NS}}\n`);
  }, 240_000);

  afterAll(async () => {
    await backend.stopAll();
    await stack?.fn.close();
    await stack?.virtApi.stop();
    await stopCluster(stack?.cluster);
    rmSync(work, { recursive: true, force: true });
  });

  test('d8v freeze freezes the guest filesystems (the agent says frozen), d8v unfreeze thaws them, and --unfreeze-timeout thaws by itself', async () => {
    const image = join(execFileSync('bash', ['tests/env/build-guest-image.sh'], { encoding: 'utf8' }).trim(), 'disk.img');
    const disk = join(work, 'web.img');
    execFileSync('cp', [image, disk]);
    const guest = await vmWithGuest('web', disk);
    const status = async (): Promise<string | undefined> => (await guest.agentReport(10_000))?.fsFreeze;
    expect(await waitFor('the guest agent answering', status, { timeoutMs: 240_000, intervalMs: 1000 })).toBe('thawed');

    const frozen = await d8v(['freeze', 'web', '-n', NS, '--unfreeze-timeout', '10m'], { kubeconfig: admin });
    expect([frozen.code, frozen.stderr]).toEqual([0, '']);
    expect(await status()).toBe('frozen');
    const thawed = await d8v(['unfreeze', 'web', '-n', NS], { kubeconfig: admin });
    expect([thawed.code, thawed.stderr]).toEqual([0, '']);
    expect(await status()).toBe('thawed');

    const brief = await d8v(['freeze', 'web', '-n', NS, '--unfreeze-timeout', '3s'], { kubeconfig: admin });
    expect(brief.code).toBe(0);
    expect(await status()).toBe('frozen');
    await waitFor('the guest thawed by its unfreeze timeout', async () => (await status()) === 'thawed', { timeoutMs: 60_000, intervalMs: 1000 });
    expect(stack.virtApi.calls.filter((c) => c.subresource === 'unfreeze' && c.name === 'web')).toHaveLength(1);
  }, 400_000);

  test('a guest whose agent never answers: the freeze fails naming the guest agent, and the API goes on serving', async () => {
    await vmWithGuest('mute', makeImage(work, 'blank.img', 'raw', 16, 4));
    const refused = await d8v(['freeze', 'mute', '-n', NS], { kubeconfig: admin });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/guest agent/);
    log.info({ code: refused.code, stderr: refused.stderr }, 'freeze of a guest without an agent');
    const again = await d8v(['unfreeze', 'web', '-n', NS], { kubeconfig: admin });
    expect(again.code).toBe(0);
  }, 200_000);
});
