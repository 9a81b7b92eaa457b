/**
 * Who may send the audit function events, against the real apiserver with real ServiceAccount tokens
 * and the install's sender RBAC (knative/rbac/components/senders.yaml, applied as it is): a forged
 * batch without a credential is 401 and one with a token of a ServiceAccount without
 * `create auditevents` is 403, on each input (/vector, /audit-webhook, CloudEvents on /), recording
 * nothing and counted; the log shipper's ServiceAccount is heard. A flood of unauthenticated
 * requests is answered without a review, and the authorised sender is still served.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../../shared/kube/index.js';
import { postUnfinished } from '../../../shared/runtime/testing/index.js';
import { golden } from '../../../functions/audit/testing/golden.js';
import { serveAudit, type ServedAudit } from '../../../functions/audit/testing/serve.js';
import { freshNamespace, getTestEnv } from '../../env/index.js';
import { createServiceAccount, serviceAccountToken } from '../metrics-auth/fixtures.js';
import { applySenderRbac, LOG_SHIPPER } from './fixtures.js';

const batch = JSON.stringify([{ message: golden('forbid', 'input') }]);
const CE = { 'ce-specversion': '1.0', 'ce-id': 'forged-1', 'ce-type': 'vector.audit', 'ce-source': '/vector', 'content-type': 'application/json' };

describe('the senders the audit function hears', () => {
  const admin = KubeClient.fromSource({ kubeconfigPath: getTestEnv().kubeconfigPath });
  let audit: ServedAudit;
  let shipper = '';
  let stranger = '';

  beforeAll(async () => {
    await applySenderRbac();
    const ns = await freshNamespace('audit-senders');
    await createServiceAccount(admin, ns, 'stranger');
    shipper = await serviceAccountToken(admin, LOG_SHIPPER.namespace, LOG_SHIPPER.name);
    stranger = await serviceAccountToken(admin, ns, 'stranger');
    audit = await serveAudit({ KUBECONFIG: getTestEnv().kubeconfigPath, SENDER_AUTH: 'kubernetes', METRICS_AUTH: 'none' });
  }, 60_000);

  afterAll(async () => {
    await audit?.close();
    admin.close();
  });

  const checks = async (result: string): Promise<number> => {
    const text = await (await fetch(`${audit.server.url}/metrics`)).text();
    return Number(new RegExp(`^sender_checks_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  };

  it.each([
    ['/vector', { 'content-type': 'application/json' }],
    ['/audit-webhook', { 'content-type': 'application/json' }],
    ['/', CE],
  ])('answers a forged batch on %s with 401 without a credential and 403 for a ServiceAccount without the rule, recording nothing', async (path, headers) => {
    const before = [await checks('unauthenticated'), await checks('forbidden')];
    const anonymous = await audit.post(path, batch, headers);
    const forbidden = await audit.post(path, batch, { ...headers, authorization: `Bearer ${stranger}` });
    expect([anonymous.status, forbidden.status]).toEqual([401, 403]);
    expect(JSON.parse(forbidden.text)).toMatchObject({
      error: { code: 'FORBIDDEN', message: expect.stringContaining('may not create auditevents.virtualization.deckhouse.io') as unknown },
    });
    expect(audit.lines).toEqual([]);
    expect([await checks('unauthenticated'), await checks('forbidden')]).toEqual([before[0] + 1, before[1] + 1]);
  });

  it("records what the log shipper's ServiceAccount sends", async () => {
    const res = await audit.post('/vector', batch, { 'content-type': 'application/json', authorization: `Bearer ${shipper}` });
    expect(res.status).toBe(200);
    expect(audit.lines.splice(0)).toEqual([golden('forbid', 'expected')]);
  });

  it('answers a flood of unauthenticated requests from headers alone and keeps serving the authorised sender', async () => {
    const other = JSON.stringify([{ message: golden('vmop-stop', 'input') }]);
    const flood = Array.from({ length: 200 }, () => audit.post('/vector', other));
    const served = audit.post('/vector', other, { 'content-type': 'application/json', authorization: `Bearer ${shipper}` });
    const statuses = await Promise.all(flood.map(async (r) => (await r).status));
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect((await served).status).toBe(200);
    expect(audit.lines.splice(0)).toEqual([golden('vmop-stop', 'expected')]);
  });

  it.each(['/vector', '/audit-webhook', '/'])(
    'answers an unauthenticated 64 MiB body on %s with 401 from its headers, long before the body could have arrived',
    async (path) => {
      const before = await checks('unauthenticated');
      const promised = 64 * 1024 * 1024;
      const answer = await postUnfinished(`${audit.server.url}${path}`, { headers: path === '/' ? CE : { 'content-type': 'application/json' }, promised });
      expect(answer).toMatchObject({ status: 401, headers: { connection: 'close', 'www-authenticate': expect.stringContaining('Bearer') as unknown } });
      // The body is never finished, so any answer came from the headers; the sender was still short of most of it.
      expect(answer.bytesSent).toBeLessThan(promised / 4);
      expect(audit.lines).toEqual([]);
      expect(await checks('unauthenticated')).toBe(before + 1);
    },
    30_000,
  );
});
