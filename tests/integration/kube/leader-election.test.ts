import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { UnavailableError } from '../../../shared/errors/index.js';
import {
  LeaderElector,
  leaseDescriptor,
  leaseSchema,
  parseMicroTime,
  type KubeClient,
  type Lease,
  type LeaseStore,
  type ResourceClient,
} from '../../../shared/kube/index.js';
import { freshNamespace } from '../../env/index.js';
import { FIELD_MANAGER, mainClient, waitFor } from './fixtures.js';

const timing = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 250 };

let client: KubeClient;
let leases: ResourceClient<Lease>;
const running: { stop: AbortController; done: Promise<void> }[] = [];

beforeAll(() => {
  client = mainClient();
  leases = client.resource(leaseDescriptor, leaseSchema, FIELD_MANAGER);
});

afterEach(async () => {
  for (const r of running.splice(0)) {
    r.stop.abort();
    await r.done;
  }
});

afterAll(() => client.close());

interface Candidate {
  stop: AbortController;
  done: Promise<void>;
  startedAt: number[];
  lostAt: number[];
  /** Make every apiserver call of this candidate fail, as if it were partitioned away. */
  cut: () => void;
}

function candidate(namespace: string, identity: string): Candidate {
  let cut = false;
  const guard = <T>(call: () => Promise<T>): Promise<T> => (cut ? Promise.reject(new UnavailableError('partitioned')) : call());
  const store: LeaseStore = {
    get: (ref, opts) => guard(() => leases.get(ref, opts)),
    create: (lease, opts) => guard(() => leases.create(lease, opts)),
    replace: (lease, opts) => guard(() => leases.replace(lease, opts)),
  };
  const startedAt: number[] = [];
  const lostAt: number[] = [];
  const elector = new LeaderElector({
    ...timing,
    leases: store,
    namespace,
    name: 'controller-lock',
    identity,
    onStartedLeading: (signal) => {
      startedAt.push(Date.now());
      signal.addEventListener('abort', () => lostAt.push(Date.now()), { once: true });
    },
  });
  const stop = new AbortController();
  const c = { stop, done: elector.run(stop.signal), startedAt, lostAt, cut: () => (cut = true) };
  running.push(c);
  return c;
}

const report = (text: string): boolean => process.stdout.write(`[kube] ${text}\n`);

describe('Lease leader election against a real apiserver', () => {
  it('writes MicroTime acquire and renew times that the apiserver stores as sent', async () => {
    const ns = await freshNamespace('kube-le');
    const a = candidate(ns, 'a');
    await waitFor(() => a.startedAt.length === 1, 5000, 'a leads');
    const lease = await leases.get({ namespace: ns, name: 'controller-lock' });
    expect(lease.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 2, leaseTransitions: 0 });
    expect(lease.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(Math.abs(parseMicroTime(lease.spec?.renewTime ?? '') / 1000 - Date.now())).toBeLessThan(5000);
  });

  it('rejects a Lease time with millisecond precision, which is why MicroTime has its own formatter', async () => {
    const ns = await freshNamespace('kube-le');
    const lease = { metadata: { namespace: ns, name: 'ms' }, spec: { holderIdentity: 'x', renewTime: new Date().toISOString() } };
    await expect(leases.create(lease)).rejects.toMatchObject({ status: 400 });
  });

  it('hands over within a retry period when the leader stops and releases the lease', async () => {
    const ns = await freshNamespace('kube-le');
    const a = candidate(ns, 'a');
    await waitFor(() => a.startedAt.length === 1, 5000, 'a leads');
    const b = candidate(ns, 'b');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(b.startedAt).toEqual([]);
    const stoppedAt = Date.now();
    a.stop.abort();
    await a.done;
    expect((await leases.get({ namespace: ns, name: 'controller-lock' })).spec?.holderIdentity).toBe('');
    await waitFor(() => b.startedAt.length === 1, 5000, 'b leads');
    const handover = (b.startedAt[0] ?? 0) - stoppedAt;
    report(`released lease handed over in ${handover} ms (retry period ${timing.retryPeriodMs} ms)`);
    expect(handover).toBeLessThan(timing.retryPeriodMs * 1.2 + 500);
    expect(a.lostAt[0]).toBeLessThanOrEqual(b.startedAt[0] ?? 0);
  });

  it('aborts a leader that cannot renew and lets the other take over within the lease duration, never overlapping', async () => {
    const ns = await freshNamespace('kube-le');
    const a = candidate(ns, 'a');
    await waitFor(() => a.startedAt.length === 1, 5000, 'a leads');
    const b = candidate(ns, 'b');
    await new Promise((resolve) => setTimeout(resolve, 600)); // b has seen a renew
    const cutAt = Date.now();
    a.cut();
    await waitFor(() => b.startedAt.length === 1, 10_000, 'b leads');
    const lost = (a.lostAt[0] ?? Infinity) - cutAt;
    const takeover = (b.startedAt[0] ?? Infinity) - cutAt;
    report(`renewals cut: leader stood down after ${lost} ms (deadline ${timing.renewDeadlineMs}), follower led after ${takeover} ms (lease ${timing.leaseDurationMs})`);
    expect(lost).toBeLessThanOrEqual(timing.renewDeadlineMs + 100);
    expect(a.lostAt[0]).toBeLessThan(b.startedAt[0] ?? 0);
    expect(takeover).toBeLessThanOrEqual(timing.leaseDurationMs + 2 * timing.retryPeriodMs * 1.2 + 300);
    expect((await leases.get({ namespace: ns, name: 'controller-lock' })).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });
});
