import { afterEach, describe, expect, it } from '@jest/globals';
import { waitFor } from '../testing/wait.js';
import { ConfigError, ConflictError, NotFoundError, UnavailableError } from '../errors/index.js';
import type { ObjectRef } from './descriptor.js';
import type { Lease } from './lease.js';
import { LeaderElector, type LeaderElectionOptions, type LeaseStore } from './leader-election.js';
import { formatMicroTime } from './microtime.js';

/**
 * One Lease in memory with the apiserver's optimistic concurrency. A view counts its calls, fails every
 * call while `cut`, and while `holdAnswers` applies a replace at once but keeps its answer back until
 * `release()` (a renewal that reached the apiserver but whose answer is slow).
 */
class MemoryLeases {
  lease: Lease | undefined;
  private version = 0;

  view(): LeaseStore & { cut: boolean; calls: number; holdAnswers: boolean; held: number; release(): void } {
    const held: (() => void)[] = [];
    const view = {
      cut: false,
      calls: 0,
      holdAnswers: false,
      get held(): number {
        return held.length;
      },
      release: (): void => held.splice(0).forEach((answer) => answer()),
      get: (ref: ObjectRef): Promise<Lease> => this.run(view, () => this.get(ref)),
      create: (lease: Lease): Promise<Lease> => this.run(view, () => this.create(lease)),
      replace: (lease: Lease): Promise<Lease> => {
        if (!view.holdAnswers || view.cut) return this.run(view, () => this.replace(lease));
        view.calls++;
        const stored = this.replace(lease);
        return new Promise((resolve) => held.push(() => resolve(stored)));
      },
    };
    return view;
  }

  private run(view: { cut: boolean; calls: number }, op: () => Lease): Promise<Lease> {
    view.calls++;
    return view.cut ? Promise.reject(new UnavailableError('cut off')) : Promise.resolve().then(op);
  }

  private get(ref: ObjectRef): Lease {
    if (!this.lease) throw new NotFoundError(`lease ${ref.name}`);
    return structuredClone(this.lease);
  }

  private create(lease: Lease): Lease {
    if (this.lease) throw new ConflictError('exists');
    return this.store(lease);
  }

  private replace(lease: Lease): Lease {
    if (lease.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) throw new ConflictError('stale');
    return this.store(lease);
  }

  private store(lease: Lease): Lease {
    this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.version) } };
    return structuredClone(this.lease);
  }
}

/** The candidates' clock: it moves only when a test moves it, so every expiry is decided by the test. */
const T0 = Date.UTC(2026, 11, 3, 8, 0, 0);
const clock = { ms: T0 };

interface Candidate {
  elector: LeaderElector;
  store: ReturnType<MemoryLeases['view']>;
  stop: AbortController;
  done: Promise<void>;
  leading: () => boolean;
  /** Holders this candidate has seen. */
  seen: string[];
}

const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };
const running: Candidate[] = [];
/** What happened, in order, across all candidates: `a started`, `a lost`, ... */
let events: string[] = [];

function candidate(leases: MemoryLeases, identity: string, extra: Partial<LeaderElectionOptions> = {}): Candidate {
  const store = leases.view();
  const stop = new AbortController();
  const seen: string[] = [];
  let leading = false;
  const elector = new LeaderElector({
    ...timing,
    leases: store,
    namespace: 'ns',
    name: 'lock',
    identity,
    now: () => clock.ms,
    onStartedLeading: (signal) => {
      leading = true;
      events.push(`${identity} started`);
      signal.addEventListener('abort', () => ((leading = false), events.push(`${identity} lost`)), { once: true });
    },
    onNewLeader: (holder) => seen.push(holder),
    ...extra,
  });
  const c = { elector, store, stop, done: elector.run(stop.signal), leading: () => leading, seen };
  running.push(c);
  return c;
}

/** Two more calls of the candidate have completed: it has looked at the lease (and the clock) again. */
async function anotherLook(c: Candidate): Promise<void> {
  const after = c.store.calls + 2;
  await waitFor('two more calls to the lease', () => c.store.calls >= after);
}

/**
 * Several more looks: longer, in real time, than the renew deadline, so that only the candidate's clock
 * (which stands still meanwhile) can be what keeps it leading.
 */
async function manyLooks(c: Candidate): Promise<void> {
  for (let i = 0; i < 4; i++) await anotherLook(c);
}

afterEach(async () => {
  for (const c of running.splice(0)) {
    c.store.release();
    c.stop.abort();
    await c.done;
  }
  clock.ms = T0;
  events = [];
});

describe('LeaderElector', () => {
  it('leads when the lease is free and records itself as holder, stamped with its clock', async () => {
    const leases = new MemoryLeases();
    const a = candidate(leases, 'a');
    await waitFor('a leads', () => a.leading());
    expect(a.elector.isLeader).toBe(true);
    const stamp = formatMicroTime(T0 * 1000);
    expect(leases.lease?.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1, leaseTransitions: 0, acquireTime: stamp, renewTime: stamp });
  });

  it('hands over as soon as the leader releases the lease, without waiting for it to expire', async () => {
    const leases = new MemoryLeases();
    const a = candidate(leases, 'a');
    await waitFor('a leads', () => a.leading());
    const b = candidate(leases, 'b');
    await waitFor('b sees a', () => b.seen.includes('a'));
    // The clock stands still: for b the lease never expires, only a release can let it in.
    await anotherLook(b);
    expect(b.leading()).toBe(false);
    a.stop.abort();
    await a.done;
    await waitFor('b leads', () => b.leading());
    expect(events).toEqual(['a started', 'a lost', 'b started']);
    expect(leases.lease?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('aborts the leader when its clock passes the renew deadline, and lets the other in only when the lease expires', async () => {
    const leases = new MemoryLeases();
    const a = candidate(leases, 'a');
    await waitFor('a leads', () => a.leading());
    const b = candidate(leases, 'b');
    await waitFor('b sees a', () => b.seen.includes('a'));
    a.store.cut = true; // a's renewals fail from now on; its last one was sent at T0

    clock.ms = T0 + timing.renewDeadlineMs - 1;
    await manyLooks(a);
    expect(a.leading()).toBe(true);
    clock.ms = T0 + timing.renewDeadlineMs;
    await anotherLook(a);
    expect(a.leading()).toBe(false);

    clock.ms = T0 + timing.leaseDurationMs - 1;
    await anotherLook(b);
    expect(b.leading()).toBe(false);
    clock.ms = T0 + timing.leaseDurationMs;
    await waitFor('b leads', () => b.leading());
    expect(events).toEqual(['a started', 'a lost', 'b started']);
    expect(leases.lease?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('counts the renew deadline from when a renewal was sent, not from when its answer came', async () => {
    const leases = new MemoryLeases();
    const a = candidate(leases, 'a');
    await waitFor('a leads', () => a.leading());
    clock.ms = T0 + 100;
    a.store.holdAnswers = true;
    await waitFor('a renewal sent at T0+100 whose answer is held', () => a.store.held === 1);
    a.store.cut = true; // no renewal after this one succeeds
    clock.ms = T0 + 500;
    a.store.release(); // the answer arrives at T0+500
    await anotherLook(a);

    clock.ms = T0 + 100 + timing.renewDeadlineMs - 1;
    await manyLooks(a);
    expect(a.leading()).toBe(true);
    clock.ms = T0 + 100 + timing.renewDeadlineMs; // well before T0+500 plus the deadline
    await anotherLook(a);
    expect(a.leading()).toBe(false);
  });

  it('does not start leading on an acquisition answered after its renew deadline', async () => {
    const leases = new MemoryLeases();
    const other = leases.view();
    await other.create({ metadata: { namespace: 'ns', name: 'lock' }, spec: { holderIdentity: '' } });
    const a = candidate(leases, 'a');
    a.store.holdAnswers = true;
    await waitFor('an acquisition sent at T0 whose answer is held', () => a.store.held === 1);
    clock.ms = T0 + timing.renewDeadlineMs;
    a.store.holdAnswers = false;
    a.store.release();
    // It renews the lease it now holds and leads on that fresher record instead.
    await waitFor('a leads', () => a.leading());
    expect(leases.lease?.spec?.renewTime).toBe(formatMicroTime(clock.ms * 1000));
    expect(events).toEqual(['a started']);
  });

  it('refuses timings that could let two leaders overlap', () => {
    const leases = new MemoryLeases().view();
    const base = { leases, namespace: 'ns', name: 'l', identity: 'a', onStartedLeading: (): void => undefined };
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 1000, renewDeadlineMs: 1000 })).toThrow(ConfigError);
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 1500, renewDeadlineMs: 1000 })).toThrow(ConfigError);
    expect(() => new LeaderElector({ ...base, renewDeadlineMs: 1000, retryPeriodMs: 900 })).toThrow(ConfigError);
  });
});
