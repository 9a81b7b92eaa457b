/**
 * KVM or TCG: KVM only when a guest's firmware actually runs under it. `/dev/kvm` can exist and still
 * refuse ordinary guests (a paravirtual KVM stops SeaBIOS with "KVM internal error"), so the probe
 * starts QEMU with KVM and no disk and waits for one of two outcomes: SeaBIOS reaching "No bootable
 * device" on its debug port (KVM works) or QEMU stopping in `internal-error` / exiting (it does not).
 */
import { spawn } from 'node:child_process';
import { access, constants, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../../../shared/testing/wait.js';
import { JsonLinesClient } from './json-lines.js';
import type { Accel } from './plan.js';

export async function probeAccel(qemu: string, timeoutMs = 30_000): Promise<{ accel: Accel; why: string }> {
  try {
    await access('/dev/kvm', constants.R_OK | constants.W_OK);
  } catch {
    return { accel: 'tcg', why: '/dev/kvm is absent or not usable by this user' };
  }
  const dir = await mkdtemp(join(tmpdir(), 'kvm-probe-'));
  const qmpPath = join(dir, 'qmp.sock');
  const bios = join(dir, 'bios.log');
  const child = spawn(
    qemu,
    [
      '-machine',
      'q35,accel=kvm',
      '-m',
      '64M',
      '-nodefaults',
      '-display',
      'none',
      '-qmp',
      `unix:${qmpPath},server=on,wait=off`,
      '-chardev',
      `file,id=bios0,path=${bios}`,
      '-device',
      'isa-debugcon,iobase=0x402,chardev=bios0',
    ],
    { stdio: 'ignore' },
  );
  let exited = false;
  child.once('exit', () => (exited = true));
  let qmp: JsonLinesClient | undefined;
  try {
    const outcome = await waitFor(
      'the KVM probe guest',
      async (): Promise<string | undefined> => {
        if (exited) return 'exited';
        if ((await readFile(bios, 'utf8').catch(() => '')).includes('No bootable device')) return 'firmware-ran';
        if (qmp === undefined) {
          qmp = await JsonLinesClient.connect(qmpPath, 'QMP');
          await qmp.next(5000);
          await qmp.execute('qmp_capabilities', undefined, 5000);
        }
        const status = (await qmp.execute('query-status', undefined, 5000)) as { status?: string };
        return status.status === 'internal-error' || status.status === 'guest-panicked' ? status.status : undefined;
      },
      { timeoutMs, intervalMs: 200 },
    );
    return outcome === 'firmware-ran'
      ? { accel: 'kvm', why: 'the firmware ran under KVM' }
      : { accel: 'tcg', why: `KVM cannot run an ordinary guest here (${outcome})` };
  } catch (err: unknown) {
    return { accel: 'tcg', why: `the KVM probe did not finish: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    qmp?.close();
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}
