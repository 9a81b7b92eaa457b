/**
 * Every function of the repository, served with nothing but its shipped defaults and a kubeconfig of
 * the test cluster (as in a pod: METRICS_AUTH unset), keeps /metrics closed to a request without a
 * token, while its liveness stays open.
 */
import { describe, expect, it } from '@jest/globals';
import { admission } from '../../../functions/admission/index.js';
import { auditFunction } from '../../../functions/audit/index.js';
import { preDelete } from '../../../functions/pre-delete/index.js';
import { sampleEcho } from '../../../functions/sample-echo/index.js';
import { serve, type ServerHandle } from '../../../shared/runtime/index.js';
import { getTestEnv } from '../../env/index.js';
import { get } from './fixtures.js';

const env = (): Record<string, string> => ({ PORT: '0', HOST: '127.0.0.1', KUBECONFIG: getTestEnv().kubeconfigPath });

const functions: ReadonlyArray<{ name: string; start: () => Promise<ServerHandle> }> = [
  { name: 'admission', start: () => serve(admission, { env: env() }) },
  { name: 'audit', start: () => serve(auditFunction, { env: env() }) },
  { name: 'pre-delete', start: () => serve(preDelete, { env: env() }) },
  { name: 'sample-echo', start: () => serve(sampleEcho, { env: env() }) },
];

describe.each(functions)('$name in its shipped defaults', ({ start }) => {
  it('answers 401 with a Bearer challenge on /metrics without a token, and 200 on /health/liveness', async () => {
    const handle = await start();
    try {
      const metrics = await get(`${handle.url}/metrics`);
      const live = await get(`${handle.url}/health/liveness`);
      expect([metrics.status, metrics.headers.get('www-authenticate'), live.status]).toEqual([401, 'Bearer realm="kubernetes"', 200]);
      expect(JSON.parse(metrics.text)).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    } finally {
      await handle.close();
    }
  });
});

describe.each([
  { name: 'audit', start: () => serve(auditFunction, { env: env() }), paths: ['/vector', '/audit-webhook', '/'] },
  { name: 'pre-delete', start: () => serve(preDelete, { env: env() }), paths: ['/'] },
])('$name in its shipped defaults', ({ start, paths }) => {
  it('refuses every input without a sender token with 401 (SENDER_AUTH=kubernetes is the default)', async () => {
    const handle = await start();
    try {
      const ce = {
        'ce-id': 'x',
        'ce-source': '/t',
        'ce-type': 'dev.knative.apiserver.resource.delete',
        'ce-specversion': '1.0',
        'content-type': 'application/json',
      };
      const statuses = await Promise.all(
        paths.map(
          async (path) =>
            (await fetch(`${handle.url}${path}`, { method: 'POST', headers: ce, body: '{"kind":"ModuleConfig","metadata":{"name":"virtualization"}}' })).status,
        ),
      );
      expect(statuses).toEqual(paths.map(() => 401));
    } finally {
      await handle.close();
    }
  });
});
