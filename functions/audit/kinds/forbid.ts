/** "Forbidden operation": a non-system user was denied by the authorizer. */
import { completeRef, commonFields, isSystemUser } from '../common.js';
import { Annotation, type AuditEvent } from '../event.js';
import type { Enrichment } from '../enrichment.js';
import { forbidRecord, RecordType, UNKNOWN } from '../records.js';
import { logged, type Decision, type EventKind } from './kind.js';

function resourcePath(ev: AuditEvent): string {
  const ref = ev.objectRef;
  let path = ref?.resource ?? '';
  if (ref?.namespace) path += `/${ref.namespace}`;
  if (ref?.name) path += `/${ref.name}`;
  return path;
}

async function build(ev: AuditEvent, enrichment: Enrichment): Promise<Decision> {
  const user = ev.user.username;
  const reason = ev.annotations?.[Annotation.reason];
  const isAdmin = await enrichment.isAdmin(ev.user).catch((): undefined => undefined);
  return logged(
    forbidRecord(
      {
        type: RecordType.forbidden,
        level: 'warn',
        name: `User '${user}' attempted to perform a forbidden operation '${ev.verb}' on resource '${resourcePath(ev)}'.`,
      },
      commonFields(ev, 'forbid'),
      {
        is_admin: isAdmin ?? false,
        source_ip: (ev.sourceIPs ?? []).join(','),
        forbid_reason: reason !== undefined && reason !== '' ? reason : UNKNOWN,
      },
    ),
  );
}

export const forbid: EventKind = {
  id: 'forbid',
  matches: (ev) => completeRef(ev) !== undefined && !isSystemUser(ev.user.username) && ev.annotations?.[Annotation.decision] === 'forbid',
  build,
};
