/**
 * The node agent's guest backend: a QEMU process per running instance (keyed by the instance's uid),
 * started from its spec with the disk files of its volumes, in `<workDir>/<namespace>_<name>_<uid>/`.
 * The accelerator is probed once (KVM only where a guest's firmware runs under it, TCG otherwise).
 */
import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { Logger } from '../../../../shared/log/index.js';
import type { GuestSockets } from '../virt-api/guest-stream.js';
import { probeAccel } from './accel.js';
import { QemuGuest } from './guest-process.js';
import { guestPlan, type Accel, type GuestDisk } from './plan.js';

const run = promisify(execFile);

export interface GuestBackendOptions {
  readonly qemu: string;
  readonly workDir: string;
  readonly memoryCapMiB: number;
  readonly shutdownGraceMs: number;
  /**
   * `tcg` (the default), `kvm`, or `auto` (probe). The probe is not yet trustworthy: on this machine's
   * paravirtual KVM SeaBIOS runs but the kernel does not, so the probe says kvm wrongly.
   */
  readonly accel?: Accel | 'auto' | undefined;
  readonly log: Logger;
}

/** The path of `qemu-system-x86_64` on PATH, or undefined. */
export async function findQemu(): Promise<string | undefined> {
  try {
    const { stdout } = await run('sh', ['-c', 'command -v qemu-system-x86_64']);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The image file of a volume directory (`disk.img`, as the importer writes it, or its only file) and its format. */
export async function diskFileIn(dir: string): Promise<{ file: string; format: 'raw' | 'qcow2' } | undefined> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => !n.endsWith('.importing'));
  const name = names.includes('disk.img') ? 'disk.img' : names.length === 1 ? names[0] : undefined;
  if (name === undefined || !(await stat(join(dir, name))).isFile()) return undefined;
  const file = join(dir, name);
  const { stdout } = await run('qemu-img', ['info', '--output=json', file]);
  return { file, format: (JSON.parse(stdout) as { format?: string }).format === 'qcow2' ? 'qcow2' : 'raw' };
}

export class GuestBackend implements GuestSockets {
  private readonly guests = new Map<string, QemuGuest>();
  private accel: Promise<Accel> | undefined;
  private qemuVersion: Promise<string> | undefined;

  constructor(private readonly options: GuestBackendOptions) {}

  /** The accelerator every guest uses (probed on first use unless given). */
  async accelerator(): Promise<Accel> {
    this.accel ??=
      this.options.accel !== 'auto'
        ? Promise.resolve(this.options.accel ?? 'tcg')
        : probeAccel(this.options.qemu).then(({ accel, why }) => {
            this.options.log.info({ accel, why }, 'guest accelerator chosen');
            return accel;
          });
    return this.accel;
  }

  /** The memory cap every guest gets here, MiB. */
  get memoryCapMiB(): number {
    return this.options.memoryCapMiB;
  }

  get(uid: string): QemuGuest | undefined {
    return this.guests.get(uid);
  }

  /** The guest of a VM by namespace and name (the console's way in). */
  byVm(namespace: string, name: string): QemuGuest | undefined {
    return [...this.guests.values()].find((g) => g.vm === `${namespace}/${name}`);
  }

  /** The serial console's or VNC socket of the VM's running guest (the virt-api stand-in's streams). */
  socketOf(namespace: string, name: string, kind: 'serial' | 'vnc'): string | undefined {
    const guest = this.byVm(namespace, name);
    if (guest === undefined || !guest.running) return undefined;
    return kind === 'serial' ? guest.serialSocket : guest.vncSocket;
  }

  /** Start the instance's guest unless it has one; `disks` are the files of its volumes. */
  async ensure(vmi: InternalVirtualMachineInstance, disks: readonly Omit<GuestDisk, 'cdrom' | 'bootOrder'>[]): Promise<QemuGuest> {
    const uid = vmi.metadata.uid ?? '';
    const have = this.guests.get(uid);
    if (have !== undefined) return have;
    const ns = vmi.metadata.namespace ?? '';
    const name = vmi.metadata.name ?? '';
    const plan = guestPlan(vmi, disks, this.options.memoryCapMiB);
    const accel = await this.accelerator();
    const log = this.options.log.child({ vm: `${ns}/${name}` });
    if (plan.capped) log.warn({ askedMiB: plan.memoryMiB, capMiB: this.options.memoryCapMiB }, 'guest memory capped on this machine');
    const guest = await QemuGuest.start({
      qemu: this.options.qemu,
      dir: join(this.options.workDir, `${ns}_${name}_${uid}`),
      plan,
      accel,
      name: `${ns}/${name}`,
      log,
    });
    this.guests.set(uid, guest);
    return guest;
  }

  /**
   * Stop the instance's guest (ACPI power-down, `graceMs` (default: the configured grace period), then
   * kill); undefined when it has none, else how it ended.
   */
  async end(uid: string, graceMs = this.options.shutdownGraceMs): Promise<'shutdown' | 'killed' | undefined> {
    const guest = this.guests.get(uid);
    if (guest === undefined) return undefined;
    this.guests.delete(uid);
    return guest.stop(graceMs);
  }

  /** The QEMU version (`qemu-system-x86_64 --version`), read once; `unknown` when it cannot be read. */
  async version(): Promise<string> {
    this.qemuVersion ??= run(this.options.qemu, ['--version']).then(
      ({ stdout }) => /version (\d+\.\d+\.\d+)/.exec(stdout)?.[1] ?? 'unknown',
      () => 'unknown',
    );
    return this.qemuVersion;
  }

  /** Kill the guests of VM `<namespace>/<name>` other than instance `keepUid` (an instance that is gone or replaced). */
  async endOthers(namespace: string, name: string, keepUid: string | undefined): Promise<void> {
    const stale = [...this.guests.entries()].filter(([uid, g]) => g.vm === `${namespace}/${name}` && uid !== keepUid);
    await Promise.all(stale.map(([uid]) => this.end(uid, 0)));
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.guests.keys()].map((uid) => this.end(uid)));
  }
}
