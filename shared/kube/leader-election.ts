import { ConfigError, ConflictError, NotFoundError } from '../errors/index.js';
import { childLogger, type Logger } from '../log/index.js';
import { sleep } from './backoff.js';
import type { ObjectRef } from './descriptor.js';
import { acquiredSpec, heldByOther, recordFingerprint, releasedSpec, type Lease, type LeaseSpec } from './lease.js';
import { nowMicros } from './microtime.js';
import type { CallOptions, WriteOptions } from './resource-client.js';

/** The narrow port the elector needs; a ResourceClient<Lease> satisfies it. */
export interface LeaseStore {
  get(ref: ObjectRef, opts?: CallOptions): Promise<Lease>;
  create(lease: Lease, opts?: WriteOptions): Promise<Lease>;
  replace(lease: Lease, opts?: WriteOptions): Promise<Lease>;
}

export interface LeaderElectionOptions {
  leases: LeaseStore;
  namespace: string;
  name: string;
  /** Unique per candidate (pod name plus a random suffix). */
  identity: string;
  /** How long others wait after the last renew they saw before taking over (whole seconds). */
  leaseDurationMs?: number;
  /**
   * The leader gives up (its signal aborts) once this long has passed, by its own clock, since it sent
   * its last successful renewal (not since the answer came: others count from when they saw the
   * record, which is after it was sent). leaseDurationMs minus this is the margin for writes in flight.
   */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew. */
  retryPeriodMs?: number;
  /** On stop, write an empty holder so another candidate takes over at once. Default true. */
  releaseOnStop?: boolean;
  /** Runs while leading; `signal` aborts the moment leadership is lost or the elector stops. */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  onStoppedLeading?: () => void;
  /** Called when a different holder is first seen. */
  onNewLeader?: (identity: string) => void;
  logger?: Logger;
  /** Milliseconds since the epoch; every expiry decision reads it (tests drive a fake). */
  now?: () => number;
}

type Attempt = 'acquired' | 'held' | 'conflict';

/** One try to acquire or renew; `sentAt` is the clock reading stamped into the record that was sent. */
interface AttemptResult {
  outcome: Attempt;
  sentAt: number;
}

/** Lease-based leader election with client-go's timing model (lease duration, renew deadline, retry). */
export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly log: Logger;
  private readonly now: () => number;
  private observed = { fingerprint: '', atMs: 0, holder: '' };
  private leading = false;

  constructor(private readonly options: LeaderElectionOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.now = options.now ?? Date.now;
    const lease = `${options.namespace}/${options.name}`;
    this.log = options.logger ?? childLogger({ component: 'leader-election', lease, identity: options.identity });
    this.validate();
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Campaign until `signal` aborts, leading whenever the lease is ours; resolves after the release. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const sentAt = await this.acquire(signal);
      if (sentAt !== undefined) await this.lead(signal, sentAt);
    }
  }

  /** Try until the lease is ours; resolves with when the acquiring record was sent (undefined once stopped). */
  private async acquire(stop: AbortSignal): Promise<number | undefined> {
    while (!stop.aborted) {
      try {
        const attempt = await this.tryAcquireOrRenew(stop);
        if (attempt.outcome === 'acquired') return attempt.sentAt;
      } catch (err: unknown) {
        if (!stop.aborted) this.log.warn({ err }, 'could not acquire the lease');
      }
      await sleep(this.retryPeriodMs * (1 + 0.2 * Math.random()), stop);
    }
    return undefined;
  }

  /**
   * Lead from a record sent at `sentAt` until the lease is lost or `stop` aborts. Whether the renew
   * deadline has passed is always decided from the clock (before each renewal, after its answer, and
   * when the wake-up timer fires), so a late timer or a slow answer never stretches the leadership.
   */
  private async lead(stop: AbortSignal, sentAt: number): Promise<void> {
    let validUntil = sentAt + this.renewDeadlineMs;
    if (this.now() >= validUntil) return; // acquired, but the answer came too late to act on it
    const lost = new AbortController();
    const stepDown = (reason: string): void => {
      if (lost.signal.aborted) return;
      lost.abort(new Error(reason));
      this.leading = false;
      this.log.warn({ reason }, 'stopped leading');
    };
    const expired = (): boolean => {
      if (this.now() >= validUntil) stepDown('renew deadline passed');
      return lost.signal.aborted;
    };
    let timer: NodeJS.Timeout | undefined;
    const wakeAtDeadline = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => expired() || wakeAtDeadline(), Math.max(1, validUntil - this.now()));
    };
    this.leading = true;
    this.log.info('started leading');
    const work = this.startWork(lost.signal);
    const until = AbortSignal.any([stop, lost.signal]);
    wakeAtDeadline();
    while (!until.aborted) {
      await sleep(this.retryPeriodMs, until);
      if (until.aborted || expired()) break;
      const attempt = await this.renew(lost.signal);
      // A renewal answered after the deadline does not revive a leadership that already ran out.
      if (expired()) break;
      if (attempt?.outcome === 'acquired') {
        validUntil = attempt.sentAt + this.renewDeadlineMs;
        wakeAtDeadline();
      }
      if (attempt?.outcome === 'held') stepDown('another candidate holds the lease');
    }
    clearTimeout(timer);
    stepDown('leader election stopped');
    this.callStopped();
    await work;
    if (stop.aborted && this.options.releaseOnStop !== false) await this.release();
  }

  private async renew(signal: AbortSignal): Promise<AttemptResult | undefined> {
    try {
      return await this.tryAcquireOrRenew(signal);
    } catch (err: unknown) {
      if (!signal.aborted) this.log.warn({ err }, 'could not renew the lease');
      return undefined;
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<AttemptResult> {
    const { leases, namespace, name, identity } = this.options;
    const durationSeconds = this.leaseDurationMs / 1000;
    let current: Lease;
    try {
      current = await leases.get({ namespace, name }, { signal });
    } catch (err: unknown) {
      if (!(err instanceof NotFoundError)) throw err;
      const sentAt = this.now();
      const spec = acquiredSpec(
        undefined,
        identity,
        nowMicros(() => sentAt),
        durationSeconds,
      );
      return { outcome: await this.write(() => leases.create({ metadata: { namespace, name }, spec }, { signal })), sentAt };
    }
    this.observe(current.spec);
    const sentAt = this.now();
    if (heldByOther(current.spec, identity, this.observed.atMs, sentAt)) return { outcome: 'held', sentAt };
    const spec = acquiredSpec(
      current.spec,
      identity,
      nowMicros(() => sentAt),
      durationSeconds,
    );
    return { outcome: await this.write(() => leases.replace({ ...current, spec }, { signal })), sentAt };
  }

  private async write(send: () => Promise<Lease>): Promise<Attempt> {
    try {
      this.observe((await send()).spec);
      return 'acquired';
    } catch (err: unknown) {
      if (err instanceof ConflictError) return 'conflict';
      throw err;
    }
  }

  private observe(spec: LeaseSpec | undefined): void {
    const fingerprint = recordFingerprint(spec);
    if (fingerprint === this.observed.fingerprint) return;
    const holder = spec?.holderIdentity ?? '';
    const changedHolder = holder !== this.observed.holder;
    this.observed = { fingerprint, atMs: this.now(), holder };
    if (changedHolder && holder !== '' && holder !== this.options.identity) this.callNewLeader(holder);
  }

  private async release(): Promise<void> {
    const { leases, namespace, name, identity } = this.options;
    const signal = AbortSignal.timeout(this.renewDeadlineMs);
    try {
      const current = await leases.get({ namespace, name }, { signal });
      if (current.spec?.holderIdentity !== identity) return;
      await leases.replace({ ...current, spec: releasedSpec(current.spec, nowMicros(this.now)) }, { signal });
      this.log.info('released the lease');
    } catch (err: unknown) {
      this.log.warn({ err }, 'could not release the lease; others take over when it expires');
    }
  }

  private async startWork(signal: AbortSignal): Promise<void> {
    try {
      await this.options.onStartedLeading(signal);
    } catch (err: unknown) {
      this.log.error({ err }, 'onStartedLeading failed');
    }
  }

  private callStopped(): void {
    try {
      this.options.onStoppedLeading?.();
    } catch (err: unknown) {
      this.log.error({ err }, 'onStoppedLeading failed');
    }
  }

  private callNewLeader(holder: string): void {
    try {
      this.options.onNewLeader?.(holder);
    } catch (err: unknown) {
      this.log.error({ err }, 'onNewLeader failed');
    }
  }

  private validate(): void {
    const problems: { path: string; message: string }[] = [];
    if (!Number.isInteger(this.leaseDurationMs / 1000) || this.leaseDurationMs < 1000) {
      problems.push({ path: 'leaseDurationMs', message: 'must be a whole number of seconds, at least 1000' });
    }
    if (this.renewDeadlineMs >= this.leaseDurationMs) problems.push({ path: 'renewDeadlineMs', message: 'must be less than leaseDurationMs' });
    if (this.retryPeriodMs * 1.2 >= this.renewDeadlineMs) problems.push({ path: 'retryPeriodMs', message: 'must be well under renewDeadlineMs' });
    if (this.options.identity === '') problems.push({ path: 'identity', message: 'must not be empty' });
    if (problems.length > 0) throw new ConfigError('invalid leader election options', problems);
  }
}
