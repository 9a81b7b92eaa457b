import { describe, expect, it } from '@jest/globals';
import { NotFoundError, UnavailableError } from '../errors/index.js';
import type { KubeObject, ObjectRef } from './descriptor.js';
import { EventRecorder, truncateUtf8, type EventStore, type KubeEvent } from './events.js';

const vm: KubeObject = { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualMachine', metadata: { namespace: 'ns', name: 'vm', uid: 'u1' } };

class FakeEvents implements EventStore {
  readonly created: KubeEvent[] = [];
  readonly patches: { ref: ObjectRef; patch: unknown }[] = [];
  failNext: Error | undefined;

  create(event: KubeEvent): Promise<KubeEvent> {
    return this.answer(() => {
      this.created.push(event);
      return event;
    });
  }

  mergePatch(ref: ObjectRef, patch: unknown): Promise<KubeEvent> {
    return this.answer(() => {
      this.patches.push({ ref, patch });
      return this.created.find((e) => e.metadata.name === ref.name) ?? { metadata: {} };
    });
  }

  private answer(ok: () => KubeEvent): Promise<KubeEvent> {
    const err = this.failNext;
    this.failNext = undefined;
    return err ? Promise.reject(err) : Promise.resolve(ok());
  }
}

function recorder(events: FakeEvents, clock: { ms: number }): EventRecorder {
  return new EventRecorder({
    events,
    reportingController: 'virtualization.deckhouse.io/controller',
    reportingInstance: 'pod-1',
    now: () => clock.ms,
    seriesWindowMs: 60_000,
  });
}

describe('EventRecorder', () => {
  it('creates an events.k8s.io Event about the object', async () => {
    const events = new FakeEvents();
    await recorder(events, { ms: Date.UTC(2026, 11, 2) }).record(vm, { type: 'Normal', reason: 'Started', action: 'Start', note: 'VM started' });
    expect(events.created).toHaveLength(1);
    expect(events.created[0]).toMatchObject({
      metadata: { namespace: 'ns' },
      eventTime: '2026-12-02T00:00:00.000000Z',
      reportingController: 'virtualization.deckhouse.io/controller',
      reportingInstance: 'pod-1',
      type: 'Normal',
      reason: 'Started',
      action: 'Start',
      note: 'VM started',
      regarding: { kind: 'VirtualMachine', namespace: 'ns', name: 'vm', uid: 'u1' },
    });
    expect(events.created[0]?.metadata.name).toMatch(/^vm\.[0-9a-f]+$/);
  });

  it('turns repeats within the window into a series with a growing count', async () => {
    const events = new FakeEvents();
    const clock = { ms: Date.UTC(2026, 11, 2) };
    const rec = recorder(events, clock);
    const input = { type: 'Warning', reason: 'Failed', action: 'Start', note: 'no disk' } as const;
    await rec.record(vm, input);
    clock.ms += 1000;
    await rec.record(vm, input);
    clock.ms += 1000;
    await rec.record(vm, input);
    expect(events.created).toHaveLength(1);
    expect(events.patches.map((p) => p.patch)).toEqual([
      { series: { count: 2, lastObservedTime: '2026-12-02T00:00:01.000000Z' } },
      { series: { count: 3, lastObservedTime: '2026-12-02T00:00:02.000000Z' } },
    ]);
    expect(events.patches[0]?.ref).toEqual({ namespace: 'ns', name: events.created[0]?.metadata.name });
  });

  it('starts a new Event after the window or when the note differs', async () => {
    const events = new FakeEvents();
    const clock = { ms: Date.UTC(2026, 11, 2) };
    const rec = recorder(events, clock);
    await rec.record(vm, { type: 'Normal', reason: 'R', action: 'A', note: 'one' });
    await rec.record(vm, { type: 'Normal', reason: 'R', action: 'A', note: 'two' });
    clock.ms += 61_000;
    await rec.record(vm, { type: 'Normal', reason: 'R', action: 'A', note: 'one' });
    expect(events.created.map((e) => e.note)).toEqual(['one', 'two', 'one']);
    expect(events.patches).toHaveLength(0);
  });

  it('creates a new Event when the series target has disappeared', async () => {
    const events = new FakeEvents();
    const rec = recorder(events, { ms: Date.UTC(2026, 11, 2) });
    await rec.record(vm, { type: 'Normal', reason: 'R', action: 'A' });
    events.failNext = new NotFoundError('gone');
    await rec.record(vm, { type: 'Normal', reason: 'R', action: 'A' });
    expect(events.created).toHaveLength(2);
  });

  it('logs instead of throwing when the apiserver is unavailable', async () => {
    const events = new FakeEvents();
    events.failNext = new UnavailableError('down');
    await expect(recorder(events, { ms: 0 }).record(vm, { type: 'Normal', reason: 'R', action: 'A' })).resolves.toBeUndefined();
    expect(events.created).toHaveLength(0);
  });

  it('cuts a long note to 1 KiB without splitting a character', () => {
    expect(Buffer.byteLength(truncateUtf8('я'.repeat(1000), 1024))).toBe(1024);
    expect(truncateUtf8('aя', 2)).toBe('a');
    expect(truncateUtf8('short', 1024)).toBe('short');
  });
});
