import { describe, expect, it } from '@jest/globals';
import { InternalVirtualMachineInstanceMigrationSchema, type InternalVirtualMachineInstanceMigration } from '../../../../shared/api/internal/resources.js';
import { failedMessage } from './migrate-ops.js';

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
