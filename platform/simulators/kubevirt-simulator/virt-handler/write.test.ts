import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { goShaped, withConditions } from '../context.js';
import { goMigrationState, instanceWriteOps } from './write.js';

const vmi = (over: Partial<InternalVirtualMachineInstance['metadata']> = {}, status?: Record<string, unknown>): InternalVirtualMachineInstance =>
  ({
    metadata: { name: 'web', namespace: 'ns', resourceVersion: '42', ...over },
    spec: { domain: {} },
    ...(status === undefined ? {} : { status }),
  }) as unknown as InternalVirtualMachineInstance;

describe('the node agent writes an instance as KubeVirt does', () => {
  it('gives a condition both timestamps, null when unset, and leaves out an empty reason and message, as Go marshals it', () => {
    expect(goShaped({ type: 'LiveMigratable', status: 'True', lastTransitionTime: '2026-12-07T00:00:00Z', reason: '', message: undefined })).toEqual({
      type: 'LiveMigratable',
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: '2026-12-07T00:00:00Z',
    });
    expect(JSON.stringify(goShaped({ type: 'Ready', status: 'False', reason: 'GuestNotRunning', message: 'm' }))).toBe(
      '{"type":"Ready","status":"False","lastProbeTime":null,"lastTransitionTime":null,"reason":"GuestNotRunning","message":"m"}',
    );
  });

  it("puts others' conditions into the same shape when it writes the list", () => {
    const out = withConditions([{ type: 'Ready', status: 'True', lastProbeTime: '2026-12-07T00:00:00Z' }], [{ type: 'AgentConnected', status: 'True' }]);
    expect(out[0]).toEqual({ type: 'Ready', status: 'True', lastProbeTime: '2026-12-07T00:00:00Z', lastTransitionTime: null });
    expect(out[1]).toMatchObject({ type: 'AgentConnected', status: 'True', lastProbeTime: null });
  });

  it('leaves false, empty and null fields out of a migration state (every Go field is omitempty)', () => {
    expect(goMigrationState({ migrationUid: 'u', completed: false, failed: false, targetNodeAddress: '', mode: null, targetNodeDomainDetected: true })).toEqual(
      {
        migrationUid: 'u',
        targetNodeDomainDetected: true,
      },
    );
  });

  it('writes with a JSON Patch on the version read: null stays null inside a value, and a null field is removed only when present', () => {
    const ops = instanceWriteOps(vmi({ labels: { a: 'b' } }, { phase: 'Scheduled', reason: 'x' }), {
      labels: { 'kubevirt.io/nodeName': 'node-1' },
      annotations: { v: '1' },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null }], reason: null, evacuationNodeName: null },
    });
    expect(ops).toEqual([
      { op: 'replace', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/metadata/labels/kubevirt.io~1nodeName', value: 'node-1' },
      { op: 'add', path: '/metadata/annotations', value: { v: '1' } },
      { op: 'add', path: '/status/phase', value: 'Running' },
      { op: 'add', path: '/status/conditions', value: [{ type: 'Ready', status: 'True', lastProbeTime: null }] },
      { op: 'remove', path: '/status/reason' },
    ]);
  });

  it("writes a migration state in Go's shape whoever built it: virt-controller's later test of the whole state must match", () => {
    const done = { migrationUid: 'u', targetNode: 'node-2', completed: true, failed: false, targetNodeAddress: '', targetNodeDomainDetected: true };
    const ops = instanceWriteOps(vmi({}, { phase: 'Running', migrationState: { migrationUid: 'u' } }), { status: { migrationState: done } });
    expect(ops).toContainEqual({
      op: 'add',
      path: '/status/migrationState',
      value: { migrationUid: 'u', targetNode: 'node-2', completed: true, targetNodeDomainDetected: true },
    });
  });

  it('refuses to write without the resourceVersion it decided on', () => {
    expect(() => instanceWriteOps(vmi({ resourceVersion: undefined }), { status: { phase: 'Running' } })).toThrow(/resourceVersion/);
  });
});
