import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { ConflictError, NotFoundError } from '../../shared/errors/index.js';
import { EventRecorder, formatMicroTime, type KubeEvent, type Lease, type ObjectRef } from '../../shared/kube/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import { leaseName, Sessions, SESSION_ID_ANNOTATION, type SessionOptions } from './sessions.js';

const vm = {
  apiVersion: 'virtualization.deckhouse.io/v1alpha2',
  kind: 'VirtualMachine',
  metadata: { name: 'vm1', namespace: 'ns', uid: '0000-1111' },
};

/** Leases kept in memory with resourceVersions, standing in for the apiserver behind the narrow port Sessions uses. */
class InMemoryLeases {
  readonly items = new Map<string, Lease>();
  private version = 0;
  failing: Error | undefined;

  private check(): void {
    if (this.failing !== undefined) throw this.failing;
  }
  get(ref: ObjectRef): Promise<Lease> {
    this.check();
    const found = this.items.get(ref.name);
    return found === undefined ? Promise.reject(new NotFoundError(`lease ${ref.name} not found`)) : Promise.resolve(structuredClone(found));
  }
  create(obj: Lease): Promise<Lease> {
    this.check();
    if (this.items.has(obj.metadata.name!)) return Promise.reject(new ConflictError('exists'));
    return Promise.resolve(this.store(obj));
  }
  replace(obj: Lease): Promise<Lease> {
    this.check();
    if (this.items.get(obj.metadata.name!)?.metadata.resourceVersion !== obj.metadata.resourceVersion) return Promise.reject(new ConflictError('stale'));
    return Promise.resolve(this.store(obj));
  }
  delete(ref: ObjectRef): Promise<void> {
    this.check();
    this.items.delete(ref.name);
    return Promise.resolve();
  }
  private store(obj: Lease): Lease {
    const stored = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++this.version) } };
    this.items.set(obj.metadata.name!, stored);
    return stored;
  }
}

function setUp(overrides: Partial<SessionOptions> = {}): { sessions: Sessions; leases: InMemoryLeases; events: KubeEvent[]; warnings: string[] } {
  const leases = new InMemoryLeases();
  const events: KubeEvent[] = [];
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) });
  const recorder = new EventRecorder({
    events: { create: (e) => (events.push(e), Promise.resolve(e)), mergePatch: () => Promise.reject(new Error('no patch expected')) },
    reportingController: 'test',
    reportingInstance: 'test',
    logger: log,
  });
  const sessions = new Sessions({ leases, events: recorder, log, durationSeconds: 30, renewMs: 60_000, ...overrides });
  return { sessions, leases, events, warnings };
}

describe('Sessions', () => {
  it('a session holds the Lease until it ends; probe names its holder meanwhile', async () => {
    const { sessions, leases } = setUp();
    const session = sessions.start('console', vm, 'alice', 'd8v/1.0');
    await waitFor('the Lease', () => Promise.resolve(leases.items.get(leaseName('console', vm))));
    expect(await sessions.probe('console', vm)).toMatchObject({ holder: 'alice', client: 'd8v/1.0' });
    await session.end();
    expect(leases.items.size).toBe(0);
    expect(await sessions.probe('console', vm)).toMatchObject({ holder: '', startTime: null });
  });

  it('probe calls an expired Lease free', async () => {
    const { sessions, leases } = setUp();
    const old = formatMicroTime((Date.now() - 60_000) * 1000);
    await leases.create({
      metadata: { name: leaseName('vnc', vm), namespace: 'ns', annotations: { [SESSION_ID_ANNOTATION]: 'x' } },
      spec: { holderIdentity: 'gone', leaseDurationSeconds: 30, acquireTime: old, renewTime: old },
    });
    expect(await sessions.probe('vnc', vm)).toMatchObject({ holder: '' });
  });

  it('a take-over records one Warning event and the first session ending leaves the Lease to the second', async () => {
    const { sessions, leases, events } = setUp();
    const first = sessions.start('vnc', vm, 'alice', 'viewer');
    await waitFor('the first Lease', () => Promise.resolve(leases.items.get(leaseName('vnc', vm))));
    const second = sessions.start('vnc', vm, 'bob', 'd8v');
    await waitFor('the event', () => Promise.resolve(events[0]));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', reason: 'VNCSessionPreempted', note: 'vnc session of alice (viewer) taken over by bob' });
    await first.end();
    expect(leases.items.get(leaseName('vnc', vm))?.spec?.holderIdentity).toBe('bob');
    await second.end();
    expect(leases.items.size).toBe(0);
  });

  it('a Lease that cannot be written is logged and never thrown: starting, renewing and ending go on', async () => {
    const { sessions, leases, warnings } = setUp({ renewMs: 20 });
    leases.failing = new Error('apiserver down');
    const session = sessions.start('console', vm, 'alice', 'x'.repeat(500));
    await waitFor('a renewal attempt logged', () => Promise.resolve(warnings.includes('session lease not renewed; the stream goes on') ? true : undefined));
    expect(warnings).toContain('session lease not written; the stream goes on');
    await session.end();
    expect(warnings).toContain('session lease not deleted; the stream goes on');
    await expect(sessions.probe('console', vm)).rejects.toThrow('apiserver down');
  });

  it('cuts the client annotation to 128 characters', async () => {
    const { sessions, leases } = setUp();
    const session = sessions.start('console', vm, 'alice', 'y'.repeat(500));
    const lease = await waitFor('the Lease', () => Promise.resolve(leases.items.get(leaseName('console', vm))));
    expect(lease.metadata.annotations?.['virtualization.deckhouse.io/session-client']).toHaveLength(128);
    await session.end();
  });
});
