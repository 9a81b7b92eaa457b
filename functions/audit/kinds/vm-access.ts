/** "Access to VM": a console, VNC or port-forward connection initiated or finished. */
import { commonFields, isSystemUser } from '../common.js';
import { Stage, type AuditEvent } from '../event.js';
import type { Enrichment } from '../enrichment.js';
import { RecordType, vmRecord } from '../records.js';
import { vmDetailsByName } from '../vm-details.js';
import { logged, type Decision, type EventKind } from './kind.js';

const SUBRESOURCES_GROUP = 'subresources.virtualization.deckhouse.io';
const ACCESS_SUBRESOURCES: ReadonlySet<string> = new Set(['console', 'vnc', 'portforward']);

function build(ev: AuditEvent, enrichment: Enrichment): Decision {
  const ns = ev.objectRef?.namespace ?? '';
  const name = ev.objectRef?.name ?? '';
  const phase = ev.stage === Stage.RequestReceived ? 'initiated' : 'finished';
  const heading = {
    type: RecordType.accessVM,
    level: 'info',
    name: `Virtual machine '${name}' connection has been ${phase} via ${ev.objectRef?.subresource ?? ''} by '${ev.user.username}'`,
  };
  return logged(vmRecord(heading, commonFields(ev), ev.verb, vmDetailsByName(ns, name, enrichment)));
}

/** Long-running connections: both RequestReceived (initiated) and ResponseComplete (finished) match. */
export const vmAccess: EventKind = {
  id: 'vm-access',
  matches: (ev) => {
    const ref = ev.objectRef;
    return (
      ref !== undefined &&
      ev.verb === 'get' &&
      ev.stage !== Stage.ResponseStarted &&
      ref.resource === 'virtualmachines' &&
      ref.apiGroup === SUBRESOURCES_GROUP &&
      ACCESS_SUBRESOURCES.has(ref.subresource ?? '') &&
      !isSystemUser(ev.user.username)
    );
  },
  build,
};
