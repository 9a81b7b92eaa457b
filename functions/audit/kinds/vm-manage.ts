/** "Manage VM": a VirtualMachine created, updated, patched or deleted through its main resource path. */
import { completeRef, commonFields, isSystemUser, responseName } from '../common.js';
import type { AuditEvent } from '../event.js';
import type { Enrichment } from '../enrichment.js';
import { RecordType, vmRecord } from '../records.js';
import { vmDetailsByName } from '../vm-details.js';
import { logged, type Decision, type EventKind } from './kind.js';

const VM_API = '/apis/virtualization.deckhouse.io/v1alpha2';

const PAST: Readonly<Record<string, string>> = { create: 'created', update: 'updated', patch: 'updated', delete: 'deleted' };

/**
 * The request path without query or fragment, percent-decoded; undefined when the URI is malformed
 * (control characters, broken escapes), as a URL parser would reject it.
 */
export function requestPath(uri: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(uri)) return undefined;
  const end = uri.search(/[?#]/);
  const raw = end < 0 ? uri : uri.slice(0, end);
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

function expectedPath(ev: AuditEvent): string | undefined {
  const ns = ev.objectRef?.namespace ?? '';
  const collection = `${VM_API}/namespaces/${ns}/virtualmachines`;
  if (ev.verb === 'create') return collection;
  if (ev.verb === 'update' || ev.verb === 'patch' || ev.verb === 'delete') return `${collection}/${ev.objectRef?.name ?? ''}`;
  return undefined;
}

function matches(ev: AuditEvent): boolean {
  const ref = completeRef(ev);
  if (ref?.resource !== 'virtualmachines' || isSystemUser(ev.user.username)) return false;
  const expected = expectedPath(ev);
  return expected !== undefined && requestPath(ev.requestURI) === expected;
}

function build(ev: AuditEvent, enrichment: Enrichment): Decision {
  const ns = ev.objectRef?.namespace ?? '';
  // A create through generateName has no name in objectRef; the response object carries it.
  const name = ev.objectRef?.name || (responseName(ev.responseObject) ?? '');
  const heading = {
    type: RecordType.manageVM,
    level: ev.verb === 'delete' ? 'warn' : 'info',
    name: `Virtual machine '${name}' has been ${PAST[ev.verb] ?? ev.verb} by '${ev.user.username}'`,
  };
  return logged(vmRecord(heading, commonFields(ev), ev.verb, vmDetailsByName(ns, name, enrichment)));
}

export const vmManage: EventKind = { id: 'vm-manage', matches, build };
