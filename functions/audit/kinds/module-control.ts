/** "Module control": a ModuleConfig (of any module) created, updated, disabled or deleted by a user. */
import { completeRef, commonFields, isSystemUser, orUnknown } from '../common.js';
import type { AuditEvent } from '../event.js';
import type { Enrichment } from '../enrichment.js';
import { defaultModuleDetails, moduleRecord, RecordType } from '../records.js';
import { logged, type Decision, type EventKind } from './kind.js';

const VERBS: ReadonlySet<string> = new Set(['create', 'patch', 'update', 'delete']);

/**
 * `spec.enabled` after the change: from the response object (the state this very request produced)
 * when the policy logged it, else from the informer.
 */
function enabledAfter(ev: AuditEvent, name: string, enrichment: Enrichment): boolean | null | undefined {
  const response = ev.responseObject as { kind?: unknown; spec?: { enabled?: unknown } } | undefined;
  if (response?.kind === 'ModuleConfig' && typeof response.spec?.enabled === 'boolean') return response.spec.enabled;
  return enrichment.getModuleConfig(name)?.spec?.enabled;
}

function sentence(ev: AuditEvent, name: string, enrichment: Enrichment): { level: string; verb: string } {
  if (ev.verb === 'create') return { level: 'info', verb: 'created' };
  if (ev.verb === 'delete') return { level: 'warn', verb: 'deleted' };
  if (enabledAfter(ev, name, enrichment) === false) return { level: 'warn', verb: 'disabled' };
  return { level: 'info', verb: 'updated' };
}

function build(ev: AuditEvent, enrichment: Enrichment): Decision {
  const name = ev.objectRef?.name ?? '';
  const { level, verb } = sentence(ev, name, enrichment);
  const heading = { type: RecordType.moduleControl, level, name: `Module '${name}' has been ${verb} by '${ev.user.username}'` };
  const details = defaultModuleDetails(ev.verb);
  details.component = name;
  details.virtualization_version = orUnknown(enrichment.getModule(name)?.properties?.version);
  return logged(moduleRecord(heading, commonFields(ev), details));
}

export const moduleControl: EventKind = {
  id: 'module-control',
  matches: (ev) => completeRef(ev)?.resource === 'moduleconfigs' && VERBS.has(ev.verb) && !isSystemUser(ev.user.username),
  build,
};
