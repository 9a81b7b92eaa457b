import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import type { RestRequest } from '../../shared/kube/index.js';
import { AdminCheck } from './admin-check.js';

const log = pino({ level: 'silent' });

/** Answers SubjectAccessReviews from a table of allowed `user resource` pairs and counts the calls. */
function reviewer(allowed: Set<string>, fail = false): { call: (req: RestRequest) => Promise<unknown>; calls: string[] } {
  const calls: string[] = [];
  const call = (req: RestRequest): Promise<unknown> => {
    const spec = (req.body as { spec: { user: string; resourceAttributes: { resource: string } } }).spec;
    calls.push(`${spec.user} ${spec.resourceAttributes.resource}`);
    if (fail) return Promise.reject(new Error('apiserver unreachable'));
    return Promise.resolve({ status: { allowed: allowed.has(`${spec.user} ${spec.resourceAttributes.resource}`) } });
  };
  return { call, calls };
}

describe('AdminCheck', () => {
  it('asks about ModuleConfigs first, then VirtualMachineClasses, and stops at the first yes', async () => {
    const r = reviewer(new Set(['ann moduleconfigs', 'bob virtualmachineclasses']));
    const check = new AdminCheck({ call: r.call, ttlMs: 60_000, log });
    expect(await check.isAdmin({ username: 'ann' })).toBe(true);
    expect(await check.isAdmin({ username: 'bob' })).toBe(true);
    expect(await check.isAdmin({ username: 'eve' })).toBe(false);
    expect(r.calls).toEqual(['ann moduleconfigs', 'bob moduleconfigs', 'bob virtualmachineclasses', 'eve moduleconfigs', 'eve virtualmachineclasses']);
  });

  it('remembers answers per user and groups until the TTL passes', async () => {
    let now = 0;
    const r = reviewer(new Set(['ann moduleconfigs']));
    const check = new AdminCheck({ call: r.call, ttlMs: 1_000, log, now: () => now });
    await check.isAdmin({ username: 'ann', groups: ['a'] });
    await check.isAdmin({ username: 'ann', groups: ['a'] });
    await check.isAdmin({ username: 'ann', groups: ['b'] });
    expect(r.calls).toHaveLength(2);
    now = 1_001;
    await check.isAdmin({ username: 'ann', groups: ['a'] });
    expect(r.calls).toHaveLength(3);
  });

  it('answers undefined when the apiserver fails, and does not remember the failure', async () => {
    const r = reviewer(new Set(), true);
    const check = new AdminCheck({ call: r.call, ttlMs: 60_000, log });
    expect(await check.isAdmin({ username: 'ann' })).toBeUndefined();
    expect(await check.isAdmin({ username: 'ann' })).toBeUndefined();
    expect(r.calls).toHaveLength(2);
  });
});
