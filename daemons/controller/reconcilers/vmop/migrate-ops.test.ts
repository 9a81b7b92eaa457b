import { describe, expect, it } from '@jest/globals';
import {
  InternalVirtualMachineInstanceMigrationSchema,
  InternalVirtualMachineInstanceSchema,
  type InternalVirtualMachineInstance,
  type InternalVirtualMachineInstanceMigration,
} from '../../../../shared/api/internal/resources.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { failedMessage, vanishedMessage } from './migrate-ops.js';

const migration = (status: Record<string, unknown>): InternalVirtualMachineInstanceMigration =>
  InternalVirtualMachineInstanceMigrationSchema.parse({
    apiVersion: 'internal.virtualization.deckhouse.io/v1',
    kind: 'InternalVirtualizationVirtualMachineInstanceMigration',
    metadata: { name: 'vmop-migrate' },
    spec: { vmiName: 'vm' },
    status,
  });

describe('failedMessage (why a Migrate or Evict operation failed)', () => {
  it("names virt-handler's failureReason first", () => {
    const m = migration({
      phase: 'Failed',
      migrationState: { failed: true, failureReason: 'Unable to write to socket: Broken pipe' },
      conditions: [{ type: 'Failed', status: 'True', message: 'virt-handler reported the migration failed' }],
    });
    expect(failedMessage(m)).toBe('the live migration failed: Unable to write to socket: Broken pipe');
  });

  it("else the Failed condition's message", () => {
    const m = migration({ phase: 'Failed', conditions: [{ type: 'Failed', status: 'True', message: 'no node can take the target pod' }] });
    expect(failedMessage(m)).toBe('the live migration failed: no node can take the target pod');
  });

  it('else says only that it failed', () => {
    expect(failedMessage(migration({ phase: 'Failed' }))).toBe('the live migration failed');
  });
});

describe('vanishedMessage (a Migrate whose migration is gone before it finished)', () => {
  const vmop = {
    metadata: { name: 'migrate', creationTimestamp: '2026-12-07T10:00:00Z' },
    status: { conditions: [{ type: 'SignalSent', status: 'True', reason: 'SignalSentSuccess', message: '', lastTransitionTime: '2026-12-07T10:00:05Z' }] },
  } as unknown as VirtualMachineOperation;
  const instance = (migrationState?: Record<string, unknown>): InternalVirtualMachineInstance =>
    InternalVirtualMachineInstanceSchema.parse({
      apiVersion: 'internal.virtualization.deckhouse.io/v1',
      kind: 'InternalVirtualizationVirtualMachineInstance',
      metadata: { name: 'vm' },
      spec: { domain: { devices: {} } },
      status: migrationState === undefined ? {} : { migrationState },
    });

  it('no instance: the VM is not running', () => {
    expect(vanishedMessage({ vmop, kvvmi: undefined })).toBe('Migration failed because the virtual machine is currently not running.');
  });

  it("the instance's failed migration after the signal: its reason", () => {
    const kvvmi = instance({ failed: true, failureReason: 'target pod died', endTimestamp: '2026-12-07T10:01:00Z' });
    expect(vanishedMessage({ vmop, kvvmi })).toBe('Migration failed: target pod died');
  });

  it("a failure recorded before the operation's signal is not this operation's", () => {
    const kvvmi = instance({ failed: true, failureReason: 'an older one', endTimestamp: '2026-12-07T09:00:00Z' });
    expect(vanishedMessage({ vmop, kvvmi })).toBe('the migration vmop-migrate was deleted before it finished');
  });

  it('else: names the migration that was deleted', () => {
    expect(vanishedMessage({ vmop, kvvmi: instance() })).toBe('the migration vmop-migrate was deleted before it finished');
  });
});
