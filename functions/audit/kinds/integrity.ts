/** "Integrity check": an internal VMI whose applied core-spec checksum differs from the reference. */
import { z } from 'zod';
import { completeRef, commonFields, orUnknown } from '../common.js';
import type { AuditEvent } from '../event.js';
import type { Enrichment, InternalVMIView } from '../enrichment.js';
import { integrityRecord, RecordType } from '../records.js';
import { logged, NOT_LOGGED, undecidable, type Decision, type EventKind } from './kind.js';

export const CORE_SPEC_CHECKSUM = 'integrity.virtualization.deckhouse.io/core-spec-checksum';
export const CORE_SPEC_CHECKSUM_APPLIED = 'integrity.virtualization.deckhouse.io/core-spec-checksum-applied';
const INTERNAL_VMIS = 'internalvirtualizationvirtualmachineinstances';

const responseVMI = z.object({
  metadata: z.object({
    name: z.string(),
    namespace: z.string().optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
});

/** System users are ignored, except the module's own service accounts. */
function isIgnoredUser(username: string): boolean {
  return (
    username.startsWith('system:') &&
    !username.startsWith('system:serviceaccount:d8-service-accounts') &&
    !username.startsWith('system:serviceaccount:d8-virtualization')
  );
}

/** The VMI from the informer (or the deleted-objects cache), else the response object. */
function currentVMI(ev: AuditEvent, enrichment: Enrichment): InternalVMIView | undefined {
  const known = enrichment.getInternalVMI(ev.objectRef?.namespace ?? '', ev.objectRef?.name ?? '');
  if (known !== undefined) return known;
  const parsed = responseVMI.safeParse(ev.responseObject);
  return parsed.success ? parsed.data : undefined;
}

function build(ev: AuditEvent, enrichment: Enrichment): Decision {
  const vmi = currentVMI(ev, enrichment);
  if (vmi === undefined) return undecidable('the internal VMI is not known: its checksum annotations decide');
  const reference = vmi.metadata?.annotations?.[CORE_SPEC_CHECKSUM];
  const current = vmi.metadata?.annotations?.[CORE_SPEC_CHECKSUM_APPLIED];
  if (reference === current) return NOT_LOGGED;
  const name = vmi.metadata?.name ?? ev.objectRef?.name ?? '';
  const heading = { type: RecordType.integrity, level: 'critical', name: `Virtual machine '${name}' config integrity check failed` };
  return logged(
    integrityRecord(heading, commonFields(ev), {
      virtual_machine_name: orUnknown(name),
      virtual_machine_namespace: orUnknown(vmi.metadata?.namespace ?? ev.objectRef?.namespace),
      reference_checksum: orUnknown(reference),
      current_checksum: orUnknown(current),
    }),
  );
}

export const integrityCheck: EventKind = {
  id: 'integrity-check',
  matches: (ev) => {
    const ref = completeRef(ev);
    return ref?.resource === INTERNAL_VMIS && (ref.name ?? '') !== '' && (ev.verb === 'patch' || ev.verb === 'update') && !isIgnoredUser(ev.user.username);
  },
  build,
};
