import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { UnavailableError } from '../../../shared/errors/index.js';
import {
  LeaderElector,
  formatMicroTime,
  leaseDescriptor,
  leaseSchema,
  type KubeClient,
  type Lease,
  type LeaseStore,
  type ResourceClient,
} from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace } from '../../env/index.js';
import { FIELD_MANAGER, mainClient } from './fixtures.js';

const timing = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 250 };

/**
 * The candidates' clock (ms since the epoch). It moves only when a test moves it, so every expiry
 * (renew deadline, lease duration) is decided by the test, never by how busy the machine is.
 */
const T0 = Date.UTC(2026, 11, 3, 8, 0, 0) + 123.456;
const clock = { ms: T0 };

let client: KubeClient;
let leases: ResourceClient<Lease>;
const running: { stop: AbortController; done: Promise<void> }[] = [];
/** What happened, in order, across all candidates: `a started`, `a lost`, ... */
let events: string[] = [];

beforeAll(() => {
  client = mainClient();
  leases = client.resource(leaseDescriptor, leaseSchema, FIELD_MANAGER);
});

afterEach(async () => {
  for (const r of running.splice(0)) {
    r.stop.abort();
    await r.done;
  }
  clock.ms = T0;
  events = [];
});

afterAll(() => client.close());

interface Candidate {
  stop: AbortController;
  done: Promise<void>;
  leading: () => boolean;
  /** Holders this candidate has seen. */
  seen: string[];
  /** Calls it has made to the apiserver (failed ones included). */
  calls: () => number;
  /** Make every apiserver call of this candidate fail, as if it were partitioned away. */
  cut: () => void;
}

function candidate(namespace: string, identity: string): Candidate {
  let cut = false;
  let calls = 0;
  const guard = <T>(call: () => Promise<T>): Promise<T> => {
    calls++;
    return cut ? Promise.reject(new UnavailableError('partitioned')) : call();
  };
  const store: LeaseStore = {
    get: (ref, opts) => guard(() => leases.get(ref, opts)),
    create: (lease, opts) => guard(() => leases.create(lease, opts)),
    replace: (lease, opts) => guard(() => leases.replace(lease, opts)),
  };
  let leading = false;
  const seen: string[] = [];
  const elector = new LeaderElector({
    ...timing,
    leases: store,
    namespace,
    name: 'controller-lock',
    identity,
    now: () => clock.ms,
    onStartedLeading: (signal) => {
      leading = true;
      events.push(`${identity} started`);
      signal.addEventListener('abort', () => ((leading = false), events.push(`${identity} lost`)), { once: true });
    },
    onNewLeader: (holder) => seen.push(holder),
  });
  const stop = new AbortController();
  const c = { stop, done: elector.run(stop.signal), leading: () => leading, seen, calls: () => calls, cut: () => (cut = true) };
  running.push(c);
  return c;
}

/** Two more calls of the candidate have completed: it has looked at the lease (and the clock) again. */
async function anotherLook(c: Candidate): Promise<void> {
  const after = c.calls() + 2;
  await waitFor('two more calls to the apiserver', () => c.calls() >= after);
}

describe('Lease leader election against a real apiserver', () => {
  it('writes MicroTime acquire and renew times that the apiserver stores as sent', async () => {
    const ns = await freshNamespace('kube-le');
    const a = candidate(ns, 'a');
    await waitFor('a leads', () => a.leading());
    const lease = await leases.get({ namespace: ns, name: 'controller-lock' });
    const stamp = formatMicroTime(Math.floor(T0 * 1000));
    expect(stamp).toBe('2026-12-03T08:00:00.123456Z');
    expect(lease.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 2, leaseTransitions: 0, acquireTime: stamp, renewTime: stamp });
  });

  it('rejects a Lease time with millisecond precision, which is why MicroTime has its own formatter', async () => {
    const ns = await freshNamespace('kube-le');
    const lease = { metadata: { namespace: ns, name: 'ms' }, spec: { holderIdentity: 'x', renewTime: new Date().toISOString() } };
    await expect(leases.create(lease)).rejects.toMatchObject({ status: 400 });
  });

  it('hands over as soon as the leader stops and releases the lease, without waiting for it to expire', async () => {
    const ns = await freshNamespace('kube-le');
    const a = candidate(ns, 'a');
    await waitFor('a leads', () => a.leading());
    const b = candidate(ns, 'b');
    await waitFor('b sees a', () => b.seen.includes('a'));
    // The clock stands still: for b the lease never expires, only a release can let it in.
    await anotherLook(b);
    expect(b.leading()).toBe(false);
    a.stop.abort();
    await a.done;
    await waitFor('b leads', () => b.leading());
    expect(events).toEqual(['a started', 'a lost', 'b started']);
    expect((await leases.get({ namespace: ns, name: 'controller-lock' })).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('aborts a leader that cannot renew once its clock passes the renew deadline, and lets the other take over only when the lease expires', async () => {
    const ns = await freshNamespace('kube-le');
    const a = candidate(ns, 'a');
    await waitFor('a leads', () => a.leading());
    const b = candidate(ns, 'b');
    await waitFor('b sees a', () => b.seen.includes('a'));
    a.cut(); // its last renewal was sent at T0

    clock.ms = T0 + timing.renewDeadlineMs - 1;
    await anotherLook(a);
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
    expect((await leases.get({ namespace: ns, name: 'controller-lock' })).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });
});
