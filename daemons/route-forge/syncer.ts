/**
 * The sync loop: one sync at a time, each a full level-triggered pass (read the kernel, compute the
 * desired state, diff, write one batch). Triggers that arrive during a sync are coalesced into the
 * next one, so a burst of events costs one or two syncs. Refused changes and failed reads are
 * retried with backoff; other VMs are unaffected because a batch goes on past a refused line.
 * Changes to other routes (`routing`) only re-run the node lookups and sync when those changed.
 */
import { performance } from 'node:perf_hooks';
import { Backoff, type BackoffOptions } from '../../shared/kube/index.js';
import type { Logger } from '../../shared/log/index.js';
import { afterApplying, causeOf, type AfterSync } from './classify.js';
import { commandFor } from './commands.js';
import { allNodeAddresses, desiredFromPlan, plan, type DesiredInput } from './desired.js';
import { diff } from './diff.js';
import type { Kernel, KernelRead, RouteEcho } from './iproute2.js';
import type { Cause, RouteForgeMetrics, Trigger } from './metrics.js';
import { SKIP_REASONS, changeKey, objectOf, routeKey, type Change, type DesiredState, type SkipReason } from './model.js';

export interface SyncerOptions {
  readonly kernel: Kernel;
  readonly table: number;
  readonly localDevice: string;
  readonly dryRun: boolean;
  /** The current VMs, CiliumNodes and CIDRs (read at the start of each sync). */
  readonly inputs: () => Pick<DesiredInput, 'vms' | 'nodes' | 'cidrs'>;
  readonly metrics: RouteForgeMetrics;
  readonly log: Logger;
  readonly retry?: BackoffOptions;
  /** Least time between two lookup-only checks caused by other routes changing (default 100 ms). */
  readonly routingCheckIntervalMs?: number;
}

export interface SyncResult {
  readonly changes: readonly Change[];
  readonly failed: number;
  readonly skipped: number;
}

export class Syncer {
  /** Each pending trigger with the time it first arrived (performance.now()). */
  private pending = new Map<Trigger, number>();
  private wake: (() => void) | undefined;
  private previous: AfterSync | undefined;
  private lookupsSeen = '';
  private devices = new Set<string>();
  /** Monitor lines expected from the last write (`+key` added or replaced, `-key` deleted), until echoesUntil. */
  private echoes = new Map<string, number>();
  private echoesUntil = 0;
  private fastWrites: Promise<void> = Promise.resolve();
  /** Repairs waiting for this turn's batch: routeKey -> its `route replace` line. */
  private readonly repairs = new Map<string, string>();
  private lastRoutingCheck = -Infinity;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly backoff: Backoff;
  private readonly skips = new Map<string, SkipReason>();
  /** The command line of each change the kernel refused in the last sync, by changeKey (to log it once). */
  private refused = new Map<string, string>();
  /** Completed syncs (for readiness and tests). */
  syncs = 0;

  /** The triggers waiting for the next sync (tests). */
  get pendingTriggers(): Trigger[] {
    return [...this.pending.keys()];
  }

  constructor(private readonly options: SyncerOptions) {
    this.backoff = new Backoff(options.retry ?? { initialMs: 500, maxMs: 30_000, jitter: 0.2 });
  }

  /**
   * The monitor saw the table change. A route change that is the echo of this process's own last
   * write (expected for two seconds after it) is not drift and triggers nothing. A wanted route that
   * someone else deleted or changed is put back by a repair of its own (below); anything else, or a
   * repair the kernel refuses, triggers a full sync.
   */
  tableChanged(route?: RouteEcho): void {
    if (route !== undefined && performance.now() < this.echoesUntil) {
      const key = `${route.deleted ? '-' : '+'}${route.key}`;
      const n = this.echoes.get(key);
      if (n !== undefined) {
        if (n <= 1) this.echoes.delete(key);
        else this.echoes.set(key, n - 1);
        return;
      }
    }
    if (route !== undefined && this.queueRepair(route)) return;
    this.trigger('table');
  }

  /**
   * A wanted route deleted or changed by someone else is put back at once, without a full sync: the
   * repair costs one `ip -batch` line whatever the size of the table (a full sync reads and parses the
   * whole table, which for 10,000 routes is megabytes of garbage per repair: the memory a daemon under
   * repeated drift grew by). Repairs seen in one turn of the event loop go out as one batch; a burst of
   * more than MAX_QUEUED_REPAIRS (a flushed table) is left to one full sync. The periodic resync still
   * checks everything. False when this change is not a repair of ours to make.
   */
  private queueRepair(echo: RouteEcho): boolean {
    const wanted = this.previous?.desired.routes.get(echo.key);
    if (this.options.dryRun || wanted === undefined || this.repairs.size >= MAX_QUEUED_REPAIRS) return false;
    if (this.repairs.size === 0) setImmediate(() => this.flushRepairs());
    this.repairs.set(echo.key, commandFor({ op: 'route-replace', route: wanted, owner: '' }, this.options.table));
    const key = `+${echo.key}`;
    this.echoes.set(key, (this.echoes.get(key) ?? 0) + 1);
    this.echoesUntil = Math.max(this.echoesUntil, performance.now() + 2_000);
    return true;
  }

  private flushRepairs(): void {
    const { kernel, metrics, log } = this.options;
    const repairs = [...this.repairs];
    this.repairs.clear();
    const lines = repairs.map(([, line]) => line);
    const write = kernel.apply(lines).then(
      (failures) => {
        const failed = new Set(failures.map((f) => f.index));
        lines.forEach((line, i) => {
          if (failed.has(i)) return;
          metrics.changes.inc({ object: 'route', op: 'replace', cause: 'repair' });
          metrics.repairs.inc({ object: 'route' });
          log.info({ command: line, owner: this.previous?.desired.owners.get(repairs[i]?.[0] ?? '') }, 'repaired: the kernel had lost or changed this');
        });
        if (failed.size > 0) this.trigger('table'); // the full sync retries and reports them
      },
      (err: unknown) => {
        log.warn({ err, commands: lines.slice(0, 20) }, 'immediate repair failed; a full sync retries');
        this.trigger('table');
      },
    );
    // A full sync reads the kernel only after this write has landed.
    this.fastWrites = Promise.all([this.fastWrites, write]).then(() => undefined);
  }

  /** Whether a route wanted by the last sync goes through this device (or it is the local device). */
  usesDevice(device: string): boolean {
    return device === this.options.localDevice || this.devices.has(device);
  }

  /** Something may have changed; the next sync looks. */
  trigger(trigger: Trigger): void {
    if (!this.pending.has(trigger)) this.pending.set(trigger, performance.now());
    this.wake?.();
  }

  /** Sync whenever triggered, until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const onAbort = (): void => this.wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        if (this.pending.size === 0) await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        if (signal.aborted) break;
        if (this.pending.size === 1 && this.pending.has('routing')) {
          const wait = this.lastRoutingCheck + (this.options.routingCheckIntervalMs ?? 100) - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        }
        const triggers = this.pending;
        this.pending = new Map();
        await this.handle(triggers);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      clearTimeout(this.retryTimer);
    }
  }

  private async handle(triggers: ReadonlyMap<Trigger, number>): Promise<void> {
    const { metrics, log } = this.options;
    const started = performance.now();
    try {
      if (triggers.size === 1 && triggers.has('routing') && this.previous !== undefined) {
        this.lastRoutingCheck = started;
        if (!(await this.lookupsChanged())) return;
      }
      const result = await this.syncOnce();
      if (result.failed > 0) this.scheduleRetry();
      else this.backoff.reset();
      metrics.syncs.inc({ result: this.options.dryRun ? 'dry-run' : result.failed > 0 ? 'partial' : 'ok' });
    } catch (err: unknown) {
      metrics.syncs.inc({ result: 'failed' });
      const delayMs = this.scheduleRetry();
      log.warn({ err, delayMs }, 'sync failed; retrying');
      return;
    } finally {
      metrics.syncDuration.observe(undefined, (performance.now() - started) / 1000);
    }
    const now = performance.now();
    for (const [trigger, since] of triggers) metrics.syncLatency.observe({ trigger }, (now - since) / 1000);
  }

  private expectEchoes(changes: readonly Change[]): void {
    this.echoes = new Map();
    for (const change of changes) {
      const key = echoKey(change);
      if (key !== undefined) this.echoes.set(key, (this.echoes.get(key) ?? 0) + 1);
    }
    this.echoesUntil = Infinity;
  }

  private scheduleRetry(): number {
    const delayMs = this.backoff.next();
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.trigger('retry'), delayMs);
    return delayMs;
  }

  /** Node lookups only: did the kernel's way to any node change since the last sync? */
  private async lookupsChanged(): Promise<boolean> {
    return fingerprint(await this.options.kernel.lookup(allNodeAddresses(this.options.inputs().nodes))) !== this.lookupsSeen;
  }

  /** One full pass; exposed for tests and the benchmark. */
  async syncOnce(): Promise<SyncResult> {
    const { kernel, table, dryRun, metrics, log } = this.options;
    await this.fastWrites;
    const inputs = this.options.inputs();
    // Every node is looked up, so the read (another process) starts before the plan and runs beside it.
    const reading = kernel.read(allNodeAddresses(inputs.nodes), table);
    const planned = plan(inputs);
    const read = await reading;
    this.lookupsSeen = fingerprint(read.lookups);
    const desired = desiredFromPlan(planned, read.lookups, this.options.localDevice);
    this.observeDesired(desired);
    this.devices = new Set([...desired.routes.values()].flatMap((r) => (r.dev === undefined ? [] : [r.dev])));
    const changes = diff(desired, read.state, table);
    const lines = changes.map((c) => commandFor(c, table));
    const failed = new Set<Change>();
    if (dryRun) {
      if (changes.length > 0) log.info({ changes: changes.length, commands: lines.slice(0, 20) }, 'dry run: changes not applied');
      metrics.pendingChanges.set(undefined, changes.length);
    } else {
      this.expectEchoes(changes);
      for (const failure of lines.length === 0 ? [] : await kernel.apply(lines)) {
        const change = changes[failure.index];
        if (change !== undefined) failed.add(change);
      }
      for (const change of failed) this.echoes.delete(echoKey(change) ?? '');
      this.echoesUntil = performance.now() + 2_000;
      this.report(changes, failed, lines);
      metrics.pendingChanges.set(undefined, failed.size);
      const applied = lines.filter((_, i) => !failed.has(changes[i]));
      if (applied.length > 0) log.info({ changes: applied.length, commands: applied.slice(0, 20) }, 'changes applied');
    }
    const ownRules = read.state.rules.filter((r) => r.table === String(table) && r.dst !== undefined).map((r) => r.dst ?? '');
    this.previous = afterApplying(desired, { routes: read.state.routes, ruleDsts: ownRules }, dryRun ? [] : changes, failed);
    this.syncs++;
    return { changes, failed: failed.size, skipped: desired.skipped.length };
  }

  private report(changes: readonly Change[], failed: ReadonlySet<Change>, lines: readonly string[]): void {
    const { metrics, log } = this.options;
    // Counted per label set first: one metric update per kind of change, not per change.
    const counts = new Map<string, { object: 'route' | 'rule'; op: string; cause: Cause; n: number }>();
    // Refused changes of this sync only: one that is accepted (or no longer wanted) is forgotten.
    const refusedNow = new Map<string, string>();
    changes.forEach((change, i) => {
      const object = objectOf(change);
      const op = change.op.split('-')[1] ?? change.op;
      if (failed.has(change)) {
        const key = changeKey(change);
        metrics.kernelErrors.inc({ object, op });
        if (this.refused.get(key) !== lines[i]) log.warn({ command: lines[i], owner: ownerOf(change) }, 'the kernel refused a change; retrying');
        refusedNow.set(key, lines[i] ?? '');
        return;
      }
      const cause = causeOf(change, this.previous);
      const countKey = `${object} ${op} ${cause}`;
      const count = counts.get(countKey);
      if (count === undefined) counts.set(countKey, { object, op, cause, n: 1 });
      else count.n++;
      if (cause === 'repair') {
        log.info({ command: lines[i], owner: ownerOf(change) }, 'repaired: the kernel had lost or changed this');
      } else if (cause === 'gc') {
        log.info({ command: lines[i] }, 'removed a stale entry left from before the start');
      } else if (log.isLevelEnabled('debug')) {
        log.debug({ command: lines[i], owner: ownerOf(change) }, 'applied');
      }
    });
    this.refused = refusedNow;
    for (const { object, op, cause, n } of counts.values()) {
      metrics.changes.inc({ object, op, cause }, n);
      if (cause === 'repair') metrics.repairs.inc({ object }, n);
    }
  }

  private observeDesired(desired: DesiredState): void {
    const { metrics, log } = this.options;
    const blackholes = desired.cidrs.length;
    metrics.routesManaged.set({ kind: 'vm' }, desired.routes.size - blackholes);
    metrics.routesManaged.set({ kind: 'blackhole' }, blackholes);
    metrics.rulesManaged.set(undefined, desired.cidrs.length);
    const counts = new Map<SkipReason, number>(SKIP_REASONS.map((r) => [r, 0]));
    const now = new Map<string, SkipReason>();
    for (const skip of desired.skipped) {
      counts.set(skip.reason, (counts.get(skip.reason) ?? 0) + 1);
      now.set(skip.vm, skip.reason);
      if (this.skips.get(skip.vm) === skip.reason) continue;
      metrics.skips.inc({ reason: skip.reason });
      const level = skip.reason === 'no-ip' || skip.reason === 'no-node' ? 'info' : 'warn';
      log[level]({ vm: skip.vm, reason: skip.reason, detail: skip.detail }, 'VM skipped: no route of its own');
    }
    for (const vm of this.skips.keys()) if (!now.has(vm)) log.info({ vm }, 'VM no longer skipped');
    this.skips.clear();
    for (const [vm, reason] of now) this.skips.set(vm, reason);
    for (const [reason, count] of counts) metrics.skipped.set({ reason }, count);
  }
}

/** More drift than this in one turn of the event loop (a flushed table) is left to one full sync. */
const MAX_QUEUED_REPAIRS = 64;

function echoKey(change: Change): string | undefined {
  if (change.op === 'route-replace') return `+${routeKey(change.route)}`;
  if (change.op === 'route-delete') return `-${routeKey(change.route)}`;
  return undefined;
}

function ownerOf(change: Change): string | undefined {
  return change.op === 'route-replace' ? change.owner : undefined;
}

function fingerprint(lookups: KernelRead['lookups']): string {
  return JSON.stringify([...lookups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
}
