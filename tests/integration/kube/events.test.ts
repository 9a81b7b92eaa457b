import { describe, expect, it } from '@jest/globals';
import { EventRecorder, eventDescriptor, eventSchema } from '../../../shared/kube/index.js';
import { freshNamespace, kubectl } from '../../env/index.js';
import { FIELD_MANAGER, newWidget, useWidgets } from './fixtures.js';

const t = useWidgets();

describe('event recording against a real apiserver', () => {
  it('records an Event about an object and aggregates repeats into one series', async () => {
    const ns = await freshNamespace('kube-ev');
    const events = t.client.resource(eventDescriptor, eventSchema, FIELD_MANAGER);
    const widget = await t.api.create(newWidget(ns, 'w'));
    const recorder = new EventRecorder({ events, reportingController: 'test.virtualization.example/controller', reportingInstance: 'test-1' });
    const input = { type: 'Warning', reason: 'ProvisioningFailed', action: 'Provision', note: 'no storage class' } as const;
    for (let i = 0; i < 3; i++) await recorder.record(widget, input);
    await recorder.record(widget, { type: 'Normal', reason: 'Provisioned', action: 'Provision' });

    const stored = (await events.list({ namespace: ns })).items;
    expect(stored).toHaveLength(2);
    const failed = stored.find((e) => e.reason === 'ProvisioningFailed');
    expect(failed).toMatchObject({
      type: 'Warning',
      note: 'no storage class',
      regarding: { kind: 'Widget', name: 'w', namespace: ns, uid: widget.metadata.uid },
      series: { count: 3 },
    });

    const core = await kubectl(['get', 'events', '-n', ns, '-o', 'json']);
    expect(core.code).toBe(0);
    // core/v1 readers (kubectl describe) see the same Event with involvedObject and series.count.
    const coreItems = (JSON.parse(core.stdout) as { items: { reason: string; involvedObject: unknown; series?: unknown }[] }).items;
    expect(coreItems.find((e) => e.reason === 'ProvisioningFailed')).toMatchObject({ involvedObject: { name: 'w' }, series: { count: 3 } });
  });
});
