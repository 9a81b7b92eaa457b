/** Rules and values shared by the event kinds. */
import { Annotation, Stage, type AuditEvent, type ObjectRef } from './event.js';
import { UNKNOWN, type CommonFields } from './records.js';

/** The module's own namespace. */
export const MODULE_NAMESPACE = 'd8-virtualization';

/** API groups the receiver treats as the module's own. */
export const VIRTUALIZATION_GROUPS: ReadonlySet<string> = new Set([
  'virtualization.deckhouse.io',
  'internal.virtualization.deckhouse.io',
  'subresources.virtualization.deckhouse.io',
]);

const RELEVANT_RESOURCES: ReadonlySet<string> = new Set(['pods', 'moduleconfigs']);

/**
 * The union of the three log-shipper filters of the original (API group, resource, namespace), as one
 * predicate: an event is considered once even when it satisfies several of them, and events from
 * inputs without those filters (the apiserver webhook) are narrowed the same way.
 */
export function isRelevant(ev: AuditEvent): boolean {
  const ref = ev.objectRef;
  if (ref === undefined) return false;
  return VIRTUALIZATION_GROUPS.has(ref.apiGroup ?? '') || RELEVANT_RESOURCES.has(ref.resource ?? '') || ref.namespace === MODULE_NAMESPACE;
}

/** `system:` users are ignored, except the module's service accounts in `d8-service-accounts`. */
export function isSystemUser(username: string): boolean {
  return username.startsWith('system:') && !username.startsWith('system:serviceaccount:d8-service-accounts');
}

export function isComplete(ev: AuditEvent): boolean {
  return ev.stage === Stage.ResponseComplete;
}

/** The event's objectRef when the event is complete and has one. */
export function completeRef(ev: AuditEvent): ObjectRef | undefined {
  return isComplete(ev) ? ev.objectRef : undefined;
}

const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/** RFC 3339 with second precision in UTC, as the original prints `requestReceivedTimestamp`. */
export function formatDatetime(timestamp: string | undefined): string {
  if (timestamp === undefined) return GO_ZERO_TIME;
  const ms = Date.parse(timestamp);
  if (Number.isNaN(ms)) return GO_ZERO_TIME;
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}Z`;
}

/** The authorizer's decision, or `fallback` when the event carries none (e.g. RequestReceived). */
export function decisionOf(ev: AuditEvent, fallback: string = UNKNOWN): string {
  const decision = ev.annotations?.[Annotation.decision];
  return decision !== undefined && decision !== '' ? decision : fallback;
}

export function commonFields(ev: AuditEvent, resultFallback: string = UNKNOWN): CommonFields {
  return {
    datetime: formatDatetime(ev.requestReceivedTimestamp),
    uid: ev.auditID,
    request_subject: ev.user.username,
    operation_result: decisionOf(ev, resultFallback),
  };
}

/**
 * Non-empty values with adjacent duplicates removed (as Go's `slices.Compact` in the original), joined
 * by `,`; undefined when nothing is left.
 */
export function compactJoin(values: ReadonlyArray<string | undefined>): string | undefined {
  const out: string[] = [];
  for (const v of values) {
    if (v === undefined || v === '') continue;
    if (out.length === 0 || out[out.length - 1] !== v) out.push(v);
  }
  return out.length === 0 ? undefined : out.join(',');
}

/** `value` unless it is missing or empty. */
export function orUnknown(value: string | undefined | null): string {
  return value === undefined || value === null || value === '' ? UNKNOWN : value;
}

/** `metadata.name` of an unknown JSON object (e.g. `responseObject`), if it is a non-empty string. */
export function responseName(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const meta = (value as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const name = (meta as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}
