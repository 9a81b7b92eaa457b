/**
 * Disk hot-plug into a real QEMU guest, against the real apiserver (the set-up: agent-world.ts). The
 * request takes the path a VirtualMachineBlockDeviceAttachment's does after the aggregator: the
 * subresources function's addvolume body (`plainUpstream`) to the virt-api stand-in, which puts the
 * volume into the instance; the node agent plugs the claim's disk image into the QEMU process and only
 * then reports the volume Ready (an empty volume, a blank VirtualDisk's, first gets a sparse image of
 * the claim's size). The guest's own block device list, read over its serial console, shows the disk,
 * and no longer once it is unplugged. Bad input: an image QEMU refuses (its backing file is gone) and
 * a claim that does not exist are reported in the volume's status with the reason while the guest runs
 * on; the image mended later is plugged on a retry. Fails, saying so, where
 * qemu-system-x86_64 is not installed (npm test installs it).
 */
import { describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { plainUpstream } from '../../../functions/subresources/options.js';
import { rootLogger } from '../../../shared/log/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { instanceWhen, useBootedGuest } from './agent-world.js';
import { requireQemu } from './qemu.js';

const qemu = await requireQemu();
const BOOT_MS = 240_000;
const STEP_MS = 90_000;
const log = rootLogger.child({ component: 'guests-hotplug-test' });

type Entry = { name?: string; phase?: string; reason?: string; message?: string; target?: string };

describe('disk hot-plug into a real QEMU guest', () => {
  const guest = useBootedGuest({ qemu, log, prefix: 'guests-hotplug', vm: 'hp', bootMs: BOOT_MS });

  /** A PUT to the stand-in as the subresources function makes it for `d8v`/the controller (query → KubeVirt's body). */
  async function subresource(sub: 'addvolume' | 'removevolume', query: Record<string, string>): Promise<{ status: number; text: string }> {
    const up = plainUpstream(sub, guest.world.ns, 'hp', new URLSearchParams(query), Buffer.from(JSON.stringify({ name: query['name'] })));
    const res = await fetch(`${guest.world.virtApi.url}${up.path}`, { method: 'PUT', body: up.body, headers: { 'content-type': 'application/json' } });
    return { status: res.status, text: await res.text() };
  }

  /**
   * The guest's block devices (`/proc/partitions`, `/sys/block`) once they match `pattern`: the guest
   * kernel probes a plugged disk on its own time after QEMU has it (seconds under TCG on a busy machine).
   */
  const guestShows = (pattern: RegExp): Promise<string> =>
    waitFor(
      `the guest's block devices to show ${String(pattern)}`,
      async () => {
        const seen = await guest.shell.run('cat /proc/partitions; ls /sys/block');
        return pattern.test(seen) ? seen : undefined;
      },
      { timeoutMs: STEP_MS, intervalMs: 2000 },
    );

  const entryOf = async (volume: string): Promise<Entry | undefined> => (await guest.world.instance('hp')).status?.volumeStatus?.find((e) => e.name === volume);

  /** A directory-backed claim as the storage simulator leaves it, holding a blank raw image of `mib` MiB (none when 0). */
  async function blankDisk(claim: string, mib: number): Promise<string> {
    const dir = join(guest.world.work, 'volumes', claim);
    mkdirSync(dir, { recursive: true });
    if (mib > 0) execFileSync('qemu-img', ['create', '-q', '-f', 'raw', join(dir, 'disk.img'), `${mib}M`]);
    await guest.world.boundClaim(claim, dir);
    return dir;
  }

  test(
    'a blank disk hot-plugged through addvolume is Ready only once the guest has it, shows in its block devices, and leaves them on removevolume',
    async () => {
      expect(await guest.shell.run('cat /proc/partitions')).not.toMatch(/\bvdb\b/);
      // A blank VirtualDisk's volume holds no image: the node agent makes a sparse one of the claim's 1 GiB.
      await blankDisk('vd-blank', 0);

      const added = await subresource('addvolume', { name: 'vd-blank', volumeKind: 'VirtualDisk', pvcName: 'vd-blank' });
      expect(added.status).toBe(200);
      const ready = await instanceWhen(
        guest.world,
        'hp',
        'the volume Ready',
        (v) => v.status?.volumeStatus?.some((e) => e.name === 'vd-blank' && e.phase === 'Ready') === true,
        STEP_MS,
      );
      // Ready is the node agent's word: the QEMU process has the disk on a hot-plug port by then.
      expect(guest.world.backend.byVm(guest.world.ns, 'hp')?.disks.get('vd-blank')?.port).toMatch(/^hp\d$/);
      expect((ready.status?.volumeStatus as Entry[]).find((e) => e.name === 'vd-blank')).toMatchObject({ reason: 'VolumeReady', target: 'vdb' });
      // 1 GiB = 1048576 blocks of 1 KiB in the guest kernel's own list.
      expect(await guestShows(/1048576 vdb/)).toMatch(/\bvdb\b/);

      const removed = await subresource('removevolume', { name: 'vd-blank' });
      expect(removed.status).toBe(200);
      await instanceWhen(
        guest.world,
        'hp',
        'the volume gone from the instance',
        (v) => !v.status?.volumeStatus?.some((e) => e.name === 'vd-blank') && !v.spec.volumes?.some((x) => x.name === 'vd-blank'),
        STEP_MS,
      );
      expect(guest.world.backend.byVm(guest.world.ns, 'hp')?.disks.has('vd-blank')).toBe(false);
      expect(await guest.shell.run('ls /sys/block')).not.toMatch(/\bvdb\b/);
    },
    4 * STEP_MS,
  );

  test(
    'an image QEMU cannot open and a missing claim are reported with the reason, the guest runs on, and the image mended later is plugged',
    async () => {
      const dir = await blankDisk('vd-broken', 0);
      // A qcow2 whose backing file is not there: qemu-img reads it, QEMU's blockdev-add refuses it.
      execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-u', '-b', join(dir, 'gone.raw'), '-F', 'raw', join(dir, 'disk.img'), '32M']);
      expect((await subresource('addvolume', { name: 'vd-broken', volumeKind: 'VirtualDisk', pvcName: 'vd-broken' })).status).toBe(200);
      expect((await subresource('addvolume', { name: 'vd-ghost', volumeKind: 'VirtualDisk', pvcName: 'vd-ghost' })).status).toBe(200);
      const failed = (v: Entry | undefined): boolean => v?.reason === 'HotplugFailed';
      await instanceWhen(
        guest.world,
        'hp',
        'both hot-plugs reported failed',
        (v) => ['vd-broken', 'vd-ghost'].every((n) => failed(v.status?.volumeStatus?.find((e) => e.name === n))),
        STEP_MS,
      );
      const broken = await entryOf('vd-broken');
      const ghost = await entryOf('vd-ghost');
      expect(broken?.phase).not.toBe('Ready');
      expect(broken?.message).toContain('hot-plug of vd-broken into the guest failed');
      expect(broken?.message).toContain('gone.raw');
      expect(ghost?.phase).not.toBe('Ready');
      expect(ghost?.message).toContain('claim vd-ghost is missing or not bound');
      // The guest runs on: the instance is Running and its shell answers.
      expect((await guest.world.instance('hp')).status?.phase).toBe('Running');
      expect(await guest.shell.run('uname -r')).toMatch(/amd64/);

      // The image mended: the next try plugs it.
      rmSync(join(dir, 'disk.img'));
      execFileSync('qemu-img', ['create', '-q', '-f', 'raw', join(dir, 'disk.img'), '32M']);
      await instanceWhen(
        guest.world,
        'hp',
        'the mended volume Ready',
        (v) => v.status?.volumeStatus?.some((e) => e.name === 'vd-broken' && e.phase === 'Ready') === true,
        STEP_MS,
      );
      expect(await guestShows(/32768 vd[b-z]/)).toMatch(/32768 vd[b-z]/);

      // Removing the volume that never reached the guest only clears its entry.
      expect((await subresource('removevolume', { name: 'vd-ghost' })).status).toBe(200);
      await instanceWhen(guest.world, 'hp', 'the ghost volume gone', (v) => !v.status?.volumeStatus?.some((e) => e.name === 'vd-ghost'), STEP_MS);
      expect(guest.world.backend.byVm(guest.world.ns, 'hp')?.running).toBe(true);
    },
    5 * STEP_MS,
  );
});
