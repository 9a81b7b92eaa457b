/** "Control VM" by operation: a VirtualMachineOperation created by a user. */
import { z } from 'zod';
import { completeRef, commonFields, isSystemUser, responseName } from '../common.js';
import { AuditLevel, type AuditEvent } from '../event.js';
import type { Enrichment, VMOPView } from '../enrichment.js';
import { RecordType, vmRecord } from '../records.js';
import { vmDetailsByName } from '../vm-details.js';
import { logged, undecidable, type Decision, type EventKind } from './kind.js';

/** Per operation type: level, action_type and the past participle of the sentence. */
const OPERATIONS: Readonly<Record<string, { level: string; action: string; past: string }>> = {
  Start: { level: 'info', action: 'start', past: 'started' },
  Stop: { level: 'warn', action: 'stop', past: 'stopped' },
  Restart: { level: 'warn', action: 'restart', past: 'restarted' },
  Migrate: { level: 'warn', action: 'migrate', past: 'migrated' },
  Evict: { level: 'warn', action: 'evict', past: 'evicted' },
};

const responseVMOP = z.object({
  kind: z.literal('VirtualMachineOperation'),
  metadata: z.object({ name: z.string(), namespace: z.string().optional() }),
  spec: z.object({ type: z.string().optional(), virtualMachineName: z.string().optional() }),
});

/**
 * The created operation: from the informer by the name in `responseObject` (objectRef has no name
 * with generateName), else the response object itself, which is the created operation.
 */
function createdVMOP(ev: AuditEvent, enrichment: Enrichment): VMOPView | undefined {
  const name = responseName(ev.responseObject);
  const known = name === undefined ? undefined : enrichment.getVMOP(ev.objectRef?.namespace ?? '', name);
  if (known !== undefined) return known;
  const parsed = responseVMOP.safeParse(ev.responseObject);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Types outside the original's five (Restore, Clone, later ones) get the same sentence pattern with
 * a derived participle, so a new operation type is reported rather than dropped.
 */
function operationOf(type: string): { level: string; action: string; past: string } {
  const known = Object.hasOwn(OPERATIONS, type) ? OPERATIONS[type] : undefined;
  if (known !== undefined) return known;
  const action = type.toLowerCase();
  return { level: 'warn', action, past: action.endsWith('e') ? `${action}d` : `${action}ed` };
}

function build(ev: AuditEvent, enrichment: Enrichment): Decision {
  const vmop = createdVMOP(ev, enrichment);
  const type = vmop?.spec?.type ?? '';
  const vm = vmop?.spec?.virtualMachineName ?? '';
  if (!/^[A-Za-z]+$/.test(type) || vm === '') {
    return undecidable('the created VirtualMachineOperation (type and VM) is not known');
  }
  const operation = operationOf(type);
  const heading = {
    type: RecordType.controlVM,
    level: operation.level,
    name: `Virtual machine '${vm}' has been ${operation.past} by '${ev.user.username}'`,
  };
  const ns = ev.objectRef?.namespace ?? '';
  return logged(vmRecord(heading, commonFields(ev), operation.action, vmDetailsByName(ns, vm, enrichment)));
}

export const vmopControl: EventKind = {
  id: 'vmop-control',
  matches: (ev) =>
    completeRef(ev)?.resource === 'virtualmachineoperations' &&
    ev.level === AuditLevel.RequestResponse &&
    ev.verb === 'create' &&
    !isSystemUser(ev.user.username),
  build,
};
