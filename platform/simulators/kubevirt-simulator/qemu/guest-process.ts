/**
 * One guest as a QEMU process: started from a plan in its own work directory, watched through its
 * serial log (login prompt) and SeaBIOS's debug port (NoBootableDevice), asked through the guest
 * agent, stopped with an ACPI power-down and a grace period, then killed. The work directory is
 * removed once the process is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm } from 'node:fs/promises';
import type { Logger } from '../../../../shared/log/index.js';
import { JsonLinesClient, JsonLinesError } from './json-lines.js';
import { coldPlugPorts, guestFiles, qemuArgs, type Accel, type GuestPlan } from './plan.js';

export interface AgentReport {
  readonly osInfo: Record<string, string>;
  readonly interfaces: readonly { name: string; 'hardware-address'?: string; 'ip-addresses'?: { 'ip-address': string }[] }[];
  /** `guest-fsfreeze-status`: `frozen` or `thawed`. */
  readonly fsFreeze: string;
}

/** What one QMP session may do: run commands (answers resolve, errors reject naming the command). */
export type Qmp = (command: string, args?: Record<string, unknown>) => Promise<unknown>;

/** A disk the guest has: its hot-plug port (none: on the root complex, not unpluggable) and block nodes, format node first. */
export interface GuestDiskState {
  readonly port: string | undefined;
  readonly nodes: readonly string[];
  /** `device_del` was sent; the guest has yet to release the disk. */
  readonly unplugging?: boolean | undefined;
}

/** QMP's asynchronous events (DEVICE_DELETED, ...). */
export type QmpEvent = Record<string, unknown>;

export type GuestFailure = { reason: 'NoBootableDevice'; message: string } | { reason: 'GuestExited'; message: string };

const NO_BOOT = 'No bootable device';
/** How many late answers of earlier exchanges a guest-sync skips before it gives up. */
const STALE_ANSWERS = 16;

async function readOr(path: string): Promise<string> {
  return readFile(path, 'utf8').catch(() => '');
}

/**
 * The guest agent's guest-sync: answers left over from earlier, timed-out exchanges (the guest
 * answers them late, to whoever is connected then) come before ours and are skipped; more than
 * `STALE_ANSWERS` of them, or none with our id, is an error.
 */
export async function guestSync(agent: JsonLinesClient, id: number, timeoutMs: number): Promise<void> {
  let synced = await agent.execute('guest-sync', { id }, timeoutMs);
  for (let stale = 0; synced !== id && stale < STALE_ANSWERS; stale++) synced = ((await agent.next(timeoutMs)) as { return?: unknown }).return;
  if (synced !== id) throw new JsonLinesError(`guest agent: guest-sync ${id} out of step (answered ${JSON.stringify(synced)})`);
}

export class QemuGuest {
  private exit: { code: number | null; signal: string | null } | undefined;
  private readonly exited: Promise<void>;
  private agent: JsonLinesClient | undefined;
  /** Agent exchanges one after another (the channel answers in order, one client at a time). */
  private agentQueue: Promise<unknown> = Promise.resolve();
  /** QMP sessions one after another (QEMU's monitor socket serves one client at a time). */
  private qmpQueue: Promise<unknown> = Promise.resolve();
  private syncId = 1;
  private stopping = false;
  /** The guest's disks by volume name: those it started with, then what hot-plug adds and removes. */
  readonly disks = new Map<string, GuestDiskState>();
  private nodeSeq = 0;

  private constructor(
    private readonly child: ChildProcess,
    readonly dir: string,
    readonly plan: GuestPlan,
    readonly accel: Accel,
    /** `<namespace>/<name>` of the VM. */
    readonly vm: string,
    private readonly log: Logger,
    private stderr: string,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve();
      });
    });
    const ports = coldPlugPorts(plan.disks);
    plan.disks.forEach((d, i) => this.disks.set(d.name, { port: ports.get(d.name), nodes: [`disk${i}`, `file${i}`] }));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => {
      this.stderr = (this.stderr + s).slice(-4096);
    });
  }

  /** Start QEMU; `incoming`: as a migration target, waiting for the source's state (`-incoming defer`) instead of booting. */
  static async start(opts: { qemu: string; dir: string; plan: GuestPlan; accel: Accel; name: string; log: Logger; incoming?: boolean }): Promise<QemuGuest> {
    await mkdir(opts.dir, { recursive: true });
    const args = qemuArgs(opts.plan, opts.dir, opts.accel, opts.name, opts.incoming === true);
    const child = spawn(opts.qemu, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const guest = new QemuGuest(child, opts.dir, opts.plan, opts.accel, opts.name, opts.log, '');
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    opts.log.info(
      { pid: child.pid, dir: opts.dir, accel: opts.accel, cpus: opts.plan.cpus, memoryMiB: opts.plan.givenMiB, askedMiB: opts.plan.memoryMiB },
      opts.incoming === true ? 'guest QEMU process started as a migration target' : 'guest QEMU process started',
    );
    return guest;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** How QEMU ended (undefined while it runs): code 0 without a signal is a guest that powered itself off. */
  get exitStatus(): { code: number | null; signal: string | null } | undefined {
    return this.exit;
  }

  /** The VNC server's unix socket (RFB). */
  get vncSocket(): string {
    return guestFiles(this.dir).vnc;
  }

  /** The serial console's unix socket (one client at a time, as QEMU's socket chardev serves it). */
  get serialSocket(): string {
    return guestFiles(this.dir).serial;
  }

  /** Everything the guest printed on its serial console so far. */
  async serialOutput(): Promise<string> {
    return readOr(guestFiles(this.dir).serialLog);
  }

  /** The guest printed a login prompt on its serial console. */
  async loginPrompt(): Promise<boolean> {
    return /login: *$/m.test(await this.serialOutput());
  }

  /** Why the guest cannot run, once that is known: the firmware found nothing to boot, or QEMU ended. */
  async failure(): Promise<GuestFailure | undefined> {
    const bios = await readOr(guestFiles(this.dir).biosLog);
    if (bios.includes(NO_BOOT)) return { reason: 'NoBootableDevice', message: 'No bootable device: the firmware found no disk it could boot' };
    if (this.exit !== undefined && !this.stopping) {
      return {
        reason: 'GuestExited',
        message: `QEMU exited (code ${String(this.exit.code)}, signal ${String(this.exit.signal)}): ${this.stderr.trim().split('\n').pop() ?? ''}`,
      };
    }
    return undefined;
  }

  /** The guest agent's OS info, interfaces and freeze state, or undefined while it does not answer. */
  async agentReport(timeoutMs = 5000): Promise<AgentReport | undefined> {
    try {
      return await this.agentSession(timeoutMs, async (run) => {
        const osInfo = (await run('guest-get-osinfo')) as Record<string, string>;
        const interfaces = (await run('guest-network-get-interfaces')) as AgentReport['interfaces'];
        const fsFreeze = String(await run('guest-fsfreeze-status'));
        return { osInfo, interfaces, fsFreeze };
      });
    } catch (err: unknown) {
      this.log.debug({ err }, 'guest agent not answering yet');
      return undefined;
    }
  }

  /**
   * Commands to the guest agent after a guest-sync, one exchange at a time; a failure (no answer, an
   * error answer) closes the channel (the next exchange reconnects) and rejects naming the command.
   */
  async agentSession<T>(timeoutMs: number, fn: (run: (command: string, args?: Record<string, unknown>) => Promise<unknown>) => Promise<T>): Promise<T> {
    const next = this.agentQueue.then(async () => {
      try {
        this.agent ??= await JsonLinesClient.connect(guestFiles(this.dir).agent, 'guest agent');
        const agent = this.agent;
        await guestSync(agent, this.syncId++, timeoutMs);
        return await fn((command, args) => agent.execute(command, args, timeoutMs));
      } catch (err: unknown) {
        this.agent?.close();
        this.agent = undefined;
        throw err;
      }
    });
    this.agentQueue = next.catch(() => undefined);
    return next;
  }

  /** A block node name not used before in this process (hot-plugged disks' nodes). */
  nextNodeName(prefix: string): string {
    return `${prefix}${this.nodeSeq++}`;
  }

  /** One QMP session (greeting, capabilities, then `fn`'s commands), one at a time; closed afterwards; its events go to `onEvent`. */
  async qmp<T>(fn: (run: Qmp) => Promise<T>, timeoutMs = 5000, onEvent?: (event: QmpEvent) => void): Promise<T> {
    const next = this.qmpQueue.then(async () => {
      const client = await JsonLinesClient.connect(guestFiles(this.dir).qmp, 'QMP', onEvent);
      try {
        await client.next(timeoutMs);
        await client.execute('qmp_capabilities', undefined, timeoutMs);
        return await fn((command, args) => client.execute(command, args, timeoutMs));
      } finally {
        client.close();
      }
    });
    this.qmpQueue = next.catch(() => undefined);
    return next;
  }

  /** Kill QEMU at once (a migration's source once the target runs, a failed target) and remove the work directory. */
  async discard(): Promise<void> {
    this.stopping = true;
    this.agent?.close();
    if (this.exit === undefined) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  /** ACPI power-down, up to `graceMs` for the guest to turn itself off, then SIGKILL; the work directory is removed. */
  async stop(graceMs: number): Promise<'shutdown' | 'killed'> {
    this.stopping = true;
    this.agent?.close();
    let how: 'shutdown' | 'killed' = 'shutdown';
    if (this.exit === undefined) {
      try {
        await this.qmp((run) => run('system_powerdown'));
      } catch (err: unknown) {
        this.log.warn({ err }, 'ACPI power-down could not be sent; killing the guest');
      }
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
      if ((await Promise.race([this.exited.then(() => 'exited' as const), timer])) === 'timeout') {
        how = 'killed';
        this.child.kill('SIGKILL');
        await this.exited;
      }
    }
    await rm(this.dir, { recursive: true, force: true });
    this.log.info({ pid: this.child.pid, how }, how === 'shutdown' ? 'guest shut down' : 'guest killed after its grace period');
    return how;
  }
}
