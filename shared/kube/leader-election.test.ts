import { afterEach, describe, expect, it } from '@jest/globals';
import { ConfigError, ConflictError, NotFoundError, UnavailableError } from '../errors/index.js';
import type { ObjectRef } from './descriptor.js';
import type { Lease } from './lease.js';
import { LeaderElector, type LeaderElectionOptions, type LeaseStore } from './leader-election.js';

/** One Lease in memory with the apiserver's optimistic concurrency; `cut` makes a view fail. */
class MemoryLeases {
  lease: Lease | undefined;
  private version = 0;

  view(): LeaseStore & { cut: boolean } {
    const view = {
      cut: false,
      get: (ref: ObjectRef): Promise<Lease> => this.run(view.cut, () => this.get(ref)),
      create: (lease: Lease): Promise<Lease> => this.run(view.cut, () => this.create(lease)),
      replace: (lease: Lease): Promise<Lease> => this.run(view.cut, () => this.replace(lease)),
    };
    return view;
  }

  private run(cut: boolean, op: () => Lease): Promise<Lease> {
    return cut ? Promise.reject(new UnavailableError('cut off')) : Promise.resolve().then(op);
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

interface Candidate {
  elector: LeaderElector;
  store: ReturnType<MemoryLeases['view']>;
  stop: AbortController;
  done: Promise<void>;
  startedAt: number[];
  lostAt: number[];
}

const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };
const running: Candidate[] = [];

function candidate(leases: MemoryLeases, identity: string, extra: Partial<LeaderElectionOptions> = {}): Candidate {
  const store = leases.view();
  const stop = new AbortController();
  const startedAt: number[] = [];
  const lostAt: number[] = [];
  const elector = new LeaderElector({
    ...timing,
    leases: store,
    namespace: 'ns',
    name: 'lock',
    identity,
    onStartedLeading: (signal) => {
      startedAt.push(Date.now());
      signal.addEventListener('abort', () => lostAt.push(Date.now()), { once: true });
    },
    ...extra,
  });
  const c = { elector, store, stop, done: elector.run(stop.signal), startedAt, lostAt };
  running.push(c);
  return c;
}

async function until(check: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now() - started;
}

afterEach(async () => {
  for (const c of running.splice(0)) {
    c.stop.abort();
    await c.done;
  }
});

describe('LeaderElector', () => {
  it('leads when the lease is free and records itself as holder', async () => {
    const leases = new MemoryLeases();
    const a = candidate(leases, 'a');
    await until(() => a.startedAt.length === 1, 2000);
    expect(a.elector.isLeader).toBe(true);
    expect(leases.lease?.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1, leaseTransitions: 0 });
  });

  it('hands over quickly when the leader stops and releases', async () => {
    const leases = new MemoryLeases();
    const a = candidate(leases, 'a');
    await until(() => a.startedAt.length === 1, 2000);
    const b = candidate(leases, 'b');
    a.stop.abort();
    await a.done;
    expect(leases.lease?.spec?.holderIdentity).toBe('');
    const handover = await until(() => b.startedAt.length === 1, 2000);
    expect(handover).toBeLessThan(timing.leaseDurationMs);
    expect(a.lostAt).toHaveLength(1);
  });

  it('aborts the leader at the renew deadline and lets the other take over only afterwards', async () => {
    const leases = new MemoryLeases();
    const a = candidate(leases, 'a');
    await until(() => a.startedAt.length === 1, 2000);
    const b = candidate(leases, 'b');
    await new Promise((resolve) => setTimeout(resolve, 250)); // b observes a's renewals
    const cutAt = Date.now();
    a.store.cut = true;
    await until(() => b.startedAt.length === 1, 3000);
    const lostAfter = (a.lostAt[0] ?? Infinity) - cutAt;
    expect(lostAfter).toBeLessThanOrEqual(timing.renewDeadlineMs + 50);
    expect(a.lostAt[0]).toBeLessThan(b.startedAt[0] ?? 0);
    expect((b.startedAt[0] ?? Infinity) - cutAt).toBeLessThan(timing.leaseDurationMs + 2 * timing.retryPeriodMs + 100);
    expect(leases.lease?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('refuses timings that could let two leaders overlap', () => {
    const leases = new MemoryLeases().view();
    const base = { leases, namespace: 'ns', name: 'l', identity: 'a', onStartedLeading: (): void => undefined };
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 1000, renewDeadlineMs: 1000 })).toThrow(ConfigError);
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 1500, renewDeadlineMs: 1000 })).toThrow(ConfigError);
    expect(() => new LeaderElector({ ...base, renewDeadlineMs: 1000, retryPeriodMs: 900 })).toThrow(ConfigError);
  });
});
