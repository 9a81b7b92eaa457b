/** Reading the test apiserver's audit log: what was really created, and how often. */
import { readFile } from 'node:fs/promises';
import { getTestEnv } from '../../env/index.js';

export interface AuditEvent {
  verb: string;
  stage: string;
  objectRef?: { resource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestObject?: { metadata?: { name?: string; labels?: Record<string, string> }; spec?: Record<string, unknown> };
  responseObject?: { metadata?: { name?: string } };
}

/** Successful creates (201) of a resource, as audit events at ResponseComplete. */
export async function successfulCreates(resource: string): Promise<AuditEvent[]> {
  const text = await readFile(getTestEnv().auditLogPath, 'utf8');
  const out: AuditEvent[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || !line.includes(`"resource":"${resource}"`) || !line.includes('"verb":"create"')) continue;
    const event = JSON.parse(line) as AuditEvent;
    if (event.stage === 'ResponseComplete' && event.objectRef?.resource === resource && event.responseStatus?.code === 201) out.push(event);
  }
  return out;
}

/** How many times each name appears. */
export function countBy(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return counts;
}

export interface AuditWrite {
  verb: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string; namespace?: string; name?: string };
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);

/** Writes to objects of a namespace received after `since` (ms epoch), except those of `exceptFieldManager`. */
export async function writesSince(namespace: string, since: number, exceptFieldManager: string): Promise<AuditWrite[]> {
  const text = await readFile(getTestEnv().auditLogPath, 'utf8');
  const out: AuditWrite[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || !line.includes(`"namespace":"${namespace}"`)) continue;
    const event = JSON.parse(line) as AuditWrite & { stage: string };
    if (event.stage !== 'ResponseComplete' || !WRITE_VERBS.has(event.verb) || event.objectRef?.namespace !== namespace) continue;
    if (event.requestURI.includes(`fieldManager=${exceptFieldManager}`)) continue;
    if (Date.parse(event.requestReceivedTimestamp) > since) out.push(event);
  }
  return out;
}
