/** Reading the test apiserver's audit log: what was really written, and how often. */
import { getTestEnv, readAuditLog } from '../../env/index.js';

/** Only files written since this test file started are read (the apiserver rotates its log). */
const LOADED_MS = Date.now();

export interface AuditEvent {
  verb: string;
  stage: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  user?: { username?: string };
  /** The client's User-Agent header. */
  userAgent?: string;
  /** The user a request impersonated (clients made with impersonatingKubeConfig). */
  impersonatedUser?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestObject?: { metadata?: { name?: string; labels?: Record<string, string> }; spec?: Record<string, unknown>; status?: Record<string, unknown> };
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);

/** Completed requests whose raw line contains every `needle` (a cheap pre-filter) and that `keep` accepts. */
async function completed(needles: readonly string[], keep: (e: AuditEvent) => boolean): Promise<AuditEvent[]> {
  const out: AuditEvent[] = [];
  for (const line of await readAuditLog(getTestEnv().auditLogPath, LOADED_MS)) {
    if (!needles.every((n) => line.includes(n))) continue;
    const event = JSON.parse(line) as AuditEvent;
    if (event.stage === 'ResponseComplete' && keep(event)) out.push(event);
  }
  return out;
}

/** Completed creates of a resource, whatever their answer (a create cut off by its client's death may be stored yet answered with an error). */
export function completedCreates(resource: string): Promise<AuditEvent[]> {
  return completed([`"resource":"${resource}"`, '"verb":"create"'], (e) => e.objectRef?.resource === resource);
}

/** Successful creates (201) of a resource. */
export function successfulCreates(resource: string): Promise<AuditEvent[]> {
  return completed([`"resource":"${resource}"`, '"verb":"create"'], (e) => e.objectRef?.resource === resource && e.responseStatus?.code === 201);
}

/** Status patches of one object. */
export function statusPatches(resource: string, namespace: string, name: string): Promise<AuditEvent[]> {
  return completed(
    [`"resource":"${resource}"`, `"name":"${name}"`],
    (e) =>
      e.verb === 'patch' &&
      e.objectRef?.resource === resource &&
      e.objectRef.subresource === 'status' &&
      e.objectRef.namespace === namespace &&
      e.objectRef.name === name,
  );
}

/** Every write to objects of a namespace, in the order the apiserver completed them. */
export function writesIn(namespace: string): Promise<AuditEvent[]> {
  return completed([`"namespace":"${namespace}"`], (e) => WRITE_VERBS.has(e.verb) && e.objectRef?.namespace === namespace);
}

/** Every write (create, update, patch, delete; status included) to one object, by resource and name. */
export function writesTo(resource: string, name: string, namespace?: string): Promise<AuditEvent[]> {
  return completed(
    [`"resource":"${resource}"`, `"name":"${name}"`],
    (e) => WRITE_VERBS.has(e.verb) && e.objectRef?.resource === resource && e.objectRef.name === name && e.objectRef.namespace === namespace,
  );
}

/** Every write (create, update, patch, delete; status included) the apiserver received from `sinceMs` to `untilMs`, in completion order. */
export function writesBetween(sinceMs: number, untilMs: number): Promise<AuditEvent[]> {
  return completed(['"verb":"'], (e) => {
    const at = Date.parse(e.requestReceivedTimestamp);
    return WRITE_VERBS.has(e.verb) && at >= sinceMs && at <= untilMs;
  });
}

/** How many times each name appears. */
export function countBy(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return counts;
}
