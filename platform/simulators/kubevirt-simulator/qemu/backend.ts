/**
 * The node agent's guest backend: a QEMU process per running instance (keyed by the instance's uid),
 * started from its spec with the disk files of its volumes, in `<workDir>/<namespace>_<name>_<uid>/`
 * (the first 32 characters of `<namespace>_<name>`, the first 8 of the uid; a migration target's with
 * `_to-<migration uid>` after it).
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
import { waitFor } from '../../../../shared/testing/wait.js';
import { QemuGuest } from './guest-process.js';
import { listenForMigration, type MigrationProgress } from './live-migration.js';
import { checkHostRoom, DEFAULT_HOST_RESERVE_MIB, readMemAvailableMiB } from './host-memory.js';
import { guestPlan, type Accel, type GuestDisk } from './plan.js';
import { forwardGuestPort } from './port-forward.js';

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
  /** A live migration's bandwidth cap, bytes per second (KubeVirt's `bandwidthPerMigration`); 0 or unset: none. */
  readonly migrationBandwidth?: number | undefined;
  /** Memory kept for the rest of the machine when a guest starts, MiB (`host-memory.ts`); default DEFAULT_HOST_RESERVE_MIB. */
  readonly hostReserveMiB?: number | undefined;
  /** The machine's available memory, MiB; default /proc/meminfo's MemAvailable. */
  readonly memAvailableMiB?: (() => Promise<number>) | undefined;
  readonly log: Logger;
}

/** How long a frozen guest stays frozen unless told (KubeVirt's default `unfreezeTimeout`). */
export const DEFAULT_UNFREEZE_MS = 5 * 60_000;
/** How long one freeze or thaw may take in the guest agent. */
const FREEZE_TIMEOUT_MS = 10_000;

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
  /** Migration targets by migration uid: a QEMU process waiting for (or receiving) its instance's state. */
  private readonly targets = new Map<string, { uid: string; guest: QemuGuest; port: number }>();
  /** How finished migrations ended, by migration uid (a step repeated after a failed write reads it again). */
  private readonly outcomes = new Map<string, MigrationProgress>();
  /** The self-thaw timers of frozen guests, by instance uid (KubeVirt's unfreezeTimeout). */
  private readonly thawTimers = new Map<string, NodeJS.Timeout>();
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

  /** A live migration's bandwidth cap, bytes per second (0: none). */
  get migrationBandwidth(): number {
    return this.options.migrationBandwidth ?? 0;
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

  /** The loopback port reaching TCP port `port` of the VM's running guest (a host forward made on first use); undefined without one. */
  forwardPort(namespace: string, name: string, port: number): Promise<number> | undefined {
    const guest = this.byVm(namespace, name);
    return guest === undefined || !guest.running ? undefined : forwardGuestPort(guest, port);
  }

  /** Start the instance's guest unless it has one; `disks` are the files of its volumes. */
  async ensure(vmi: InternalVirtualMachineInstance, disks: readonly Omit<GuestDisk, 'cdrom' | 'bootOrder'>[]): Promise<QemuGuest> {
    const uid = vmi.metadata.uid ?? '';
    const have = this.guests.get(uid);
    if (have !== undefined) return have;
    const guest = await this.spawn(vmi, disks, '');
    this.guests.set(uid, guest);
    return guest;
  }

  /**
   * The target of migration `migrationUid`: a QEMU process from the same spec and disk files that waits
   * for the source's state instead of booting, listening on a TCP port of `host` (started unless it runs already).
   */
  async prepareTarget(
    vmi: InternalVirtualMachineInstance,
    migrationUid: string,
    disks: readonly Omit<GuestDisk, 'cdrom' | 'bootOrder'>[],
    host: string,
  ): Promise<{ guest: QemuGuest; port: number }> {
    const have = this.targets.get(migrationUid);
    if (have !== undefined) return have;
    const guest = await this.spawn(vmi, disks, `_to-${migrationUid.slice(0, 8)}`);
    try {
      const port = await waitFor('the migration target to listen', () => listenForMigration(guest, host), {
        timeoutMs: 30_000,
        intervalMs: 200,
        abortIf: () => (guest.running ? undefined : 'the target QEMU process exited'),
      });
      const entry = { uid: vmi.metadata.uid ?? '', guest, port };
      this.targets.set(migrationUid, entry);
      return entry;
    } catch (err: unknown) {
      await guest.discard();
      throw err;
    }
  }

  /** How migration `migrationUid` ended here, once it has (completed or failed). */
  outcome(migrationUid: string): MigrationProgress | undefined {
    return this.outcomes.get(migrationUid);
  }

  private remember(migrationUid: string, outcome: MigrationProgress): void {
    this.outcomes.set(migrationUid, outcome);
    for (const old of [...this.outcomes.keys()].slice(0, Math.max(0, this.outcomes.size - 100))) this.outcomes.delete(old);
  }

  /** The target process of migration `migrationUid`, if it is here. */
  target(migrationUid: string): QemuGuest | undefined {
    return this.targets.get(migrationUid)?.guest;
  }

  /** Migration uids with a target process here for instance `uid`. */
  targetsOf(uid: string): string[] {
    return [...this.targets.entries()].filter(([, t]) => t.uid === uid).map(([m]) => m);
  }

  /** The migration completed: its target is the instance's guest from now on; the source process is discarded. */
  async promote(migrationUid: string, outcome: MigrationProgress): Promise<void> {
    const t = this.targets.get(migrationUid);
    if (t === undefined) return;
    this.remember(migrationUid, outcome);
    this.targets.delete(migrationUid);
    const source = this.guests.get(t.uid);
    this.guests.set(t.uid, t.guest);
    await source?.discard();
  }

  /** The migration failed or was cancelled: its target process is discarded (the source goes on). */
  async dropTarget(migrationUid: string, outcome?: MigrationProgress): Promise<void> {
    if (outcome !== undefined) this.remember(migrationUid, outcome);
    const t = this.targets.get(migrationUid);
    this.targets.delete(migrationUid);
    await t?.guest.discard();
  }

  /**
   * Freeze (`guest-fsfreeze-freeze`, thawed again by itself after `unfreezeMs`) or thaw the
   * filesystems of VM `<namespace>/<name>`'s guest through its guest agent; `no-guest` when the VM runs
   * no real guest here. A guest agent that does not answer or refuses rejects naming why.
   */
  async fsFreeze(namespace: string, name: string, action: 'freeze' | 'thaw', unfreezeMs = DEFAULT_UNFREEZE_MS): Promise<'done' | 'no-guest'> {
    const entry = [...this.guests.entries()].find(([, g]) => g.vm === `${namespace}/${name}` && g.running);
    if (entry === undefined) return 'no-guest';
    const [uid, guest] = entry;
    clearTimeout(this.thawTimers.get(uid));
    this.thawTimers.delete(uid);
    await guest.agentSession(FREEZE_TIMEOUT_MS, (run) => run(action === 'freeze' ? 'guest-fsfreeze-freeze' : 'guest-fsfreeze-thaw'));
    this.options.log.info(
      { vm: guest.vm, action },
      action === 'freeze' ? 'guest filesystems frozen by the guest agent' : 'guest filesystems thawed by the guest agent',
    );
    if (action === 'freeze') {
      const timer = setTimeout(() => {
        this.thawTimers.delete(uid);
        void this.fsFreeze(namespace, name, 'thaw').catch((err: unknown) =>
          this.options.log.warn({ err, vm: guest.vm }, 'the unfreeze timeout could not thaw the guest'),
        );
      }, unfreezeMs);
      timer.unref();
      this.thawTimers.set(uid, timer);
    }
    return 'done';
  }

  private async spawn(vmi: InternalVirtualMachineInstance, disks: readonly Omit<GuestDisk, 'cdrom' | 'bootOrder'>[], suffix: string): Promise<QemuGuest> {
    const uid = vmi.metadata.uid ?? '';
    const ns = vmi.metadata.namespace ?? '';
    const name = vmi.metadata.name ?? '';
    const plan = guestPlan(vmi, disks, this.options.memoryCapMiB);
    const available = await (this.options.memAvailableMiB ?? readMemAvailableMiB)();
    checkHostRoom(`${ns}/${name}`, plan.givenMiB, available, this.options.hostReserveMiB ?? DEFAULT_HOST_RESERVE_MIB);
    const accel = await this.accelerator();
    const log = this.options.log.child({ vm: `${ns}/${name}` });
    if (plan.capped) log.warn({ askedMiB: plan.memoryMiB, capMiB: this.options.memoryCapMiB }, 'guest memory capped on this machine');
    return QemuGuest.start({
      qemu: this.options.qemu,
      // Short: QEMU's unix sockets live in it, and a socket path has at most 107 bytes.
      dir: join(this.options.workDir, `${`${ns}_${name}`.slice(0, 32)}_${uid.slice(0, 8)}${suffix}`),
      plan,
      accel,
      name: `${ns}/${name}`,
      log,
      incoming: suffix !== '',
    });
  }

  /**
   * Stop the instance's guest (ACPI power-down, `graceMs` (default: the configured grace period), then
   * kill); undefined when it has none, else how it ended.
   */
  async end(uid: string, graceMs = this.options.shutdownGraceMs): Promise<'shutdown' | 'killed' | undefined> {
    await Promise.all(this.targetsOf(uid).map((m) => this.dropTarget(m)));
    clearTimeout(this.thawTimers.get(uid));
    this.thawTimers.delete(uid);
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

  /** Kill the guests (and migration targets) of VM `<namespace>/<name>` other than instance `keepUid` (an instance that is gone or replaced). */
  async endOthers(namespace: string, name: string, keepUid: string | undefined): Promise<void> {
    const stale = [...this.guests.entries()].filter(([uid, g]) => g.vm === `${namespace}/${name}` && uid !== keepUid);
    const staleTargets = [...this.targets.entries()].filter(([, t]) => t.guest.vm === `${namespace}/${name}` && t.uid !== keepUid);
    await Promise.all([...stale.map(([uid]) => this.end(uid, 0)), ...staleTargets.map(([m]) => this.dropTarget(m))]);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.targets.keys()].map((m) => this.dropTarget(m)));
    await Promise.all([...this.guests.keys()].map((uid) => this.end(uid)));
  }
}
