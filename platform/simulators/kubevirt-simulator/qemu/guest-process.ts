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
import { guestFiles, qemuArgs, type Accel, type GuestPlan } from './plan.js';

export interface AgentReport {
  readonly osInfo: Record<string, string>;
  readonly interfaces: readonly { name: string; 'hardware-address'?: string; 'ip-addresses'?: { 'ip-address': string }[] }[];
}

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
  private syncId = 1;
  private stopping = false;

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
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => {
      this.stderr = (this.stderr + s).slice(-4096);
    });
  }

  static async start(opts: { qemu: string; dir: string; plan: GuestPlan; accel: Accel; name: string; log: Logger }): Promise<QemuGuest> {
    await mkdir(opts.dir, { recursive: true });
    const child = spawn(opts.qemu, qemuArgs(opts.plan, opts.dir, opts.accel, opts.name), { stdio: ['ignore', 'ignore', 'pipe'] });
    const guest = new QemuGuest(child, opts.dir, opts.plan, opts.accel, opts.name, opts.log, '');
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    opts.log.info(
      { pid: child.pid, dir: opts.dir, accel: opts.accel, cpus: opts.plan.cpus, memoryMiB: opts.plan.givenMiB, askedMiB: opts.plan.memoryMiB },
      'guest QEMU process started',
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

  /** The guest agent's OS info and interfaces, or undefined while it does not answer. */
  async agentReport(timeoutMs = 5000): Promise<AgentReport | undefined> {
    try {
      this.agent ??= await JsonLinesClient.connect(guestFiles(this.dir).agent, 'guest agent');
      const id = this.syncId++;
      await guestSync(this.agent, id, timeoutMs);
      const osInfo = (await this.agent.execute('guest-get-osinfo', undefined, timeoutMs)) as Record<string, string>;
      const interfaces = (await this.agent.execute('guest-network-get-interfaces', undefined, timeoutMs)) as AgentReport['interfaces'];
      return { osInfo, interfaces };
    } catch (err: unknown) {
      this.log.debug({ err }, 'guest agent not answering yet');
      this.agent?.close();
      this.agent = undefined;
      return undefined;
    }
  }

  /** ACPI power-down, up to `graceMs` for the guest to turn itself off, then SIGKILL; the work directory is removed. */
  async stop(graceMs: number): Promise<'shutdown' | 'killed'> {
    this.stopping = true;
    this.agent?.close();
    let how: 'shutdown' | 'killed' = 'shutdown';
    if (this.exit === undefined) {
      try {
        const qmp = await JsonLinesClient.connect(guestFiles(this.dir).qmp, 'QMP');
        await qmp.next(5000);
        await qmp.execute('qmp_capabilities', undefined, 5000);
        await qmp.execute('system_powerdown', undefined, 5000);
        qmp.close();
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
