import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { preDelete } from '../../../functions/pre-delete/index.js';
import { serve, type ServerHandle } from '../../../shared/runtime/index.js';
import { binaryHeaders, send, type TestResponse } from '../../../shared/runtime/testing/index.js';
import { freshNamespace } from '../../env/index.js';
import { adminKube, cdi, createTarget, envFor, FINALIZER, kubeVirt, read, releaseFinalizers } from './fixtures.js';
import type { Target } from '../../../functions/pre-delete/config.js';

const kube = adminKube();
afterAll(() => kube.close());

/** The function served in-process on a free port, aimed at `targets` on the test apiserver. */
async function served(targets: Target[], waitTimeout: string): Promise<ServerHandle> {
  return serve(preDelete, { env: { ...envFor(targets, waitTimeout), PORT: '0', HOST: '127.0.0.1' } });
}

function moduleConfigChange(host: ServerHandle, op: 'update' | 'delete', data: unknown): Promise<TestResponse> {
  return send(host.url, {
    method: 'POST',
    headers: binaryHeaders({ id: `e-${op}`, type: `dev.knative.apiserver.resource.${op}`, source: 'https://10.96.0.1:443' }),
    body: JSON.stringify(data),
  });
}

const moduleConfig = (enabled: boolean): object => ({
  apiVersion: 'deckhouse.io/v1alpha1',
  kind: 'ModuleConfig',
  metadata: { name: 'virtualization' },
  spec: { enabled, version: 1 },
});

describe('the pre-delete function on a CloudEvent from the ApiServerSource', () => {
  let ns = '';
  beforeAll(async () => {
    ns = await freshNamespace('pre-delete-fn');
  });

  it('answers 204 once the deletion of the virtualization ModuleConfig has removed the objects', async () => {
    const targets = [kubeVirt(ns, 'config-deleted'), cdi()];
    for (const t of targets) await createTarget(kube, t);
    const host = await served(targets, '10s');
    try {
      expect((await moduleConfigChange(host, 'delete', moduleConfig(true))).status).toBe(204);
      expect(await Promise.all(targets.map((t) => read(kube, t)))).toEqual([undefined, undefined]);
    } finally {
      await host.close();
    }
  });

  it('answers 204 and deletes nothing while the module stays enabled', async () => {
    const target = kubeVirt(ns, 'config-enabled');
    await createTarget(kube, target);
    const host = await served([target], '10s');
    try {
      expect((await moduleConfigChange(host, 'update', moduleConfig(true))).status).toBe(204);
      expect((await read(kube, target))?.metadata.deletionTimestamp).toBeUndefined();
    } finally {
      await host.close();
    }
  });

  it('answers 504 naming the object when a finalizer outlives the deadline, so that the Trigger redelivers', async () => {
    const target = kubeVirt(ns, 'config-stuck');
    await createTarget(kube, target, [FINALIZER]);
    const host = await served([target], '1s');
    try {
      const res = await moduleConfigChange(host, 'update', moduleConfig(false));
      expect(res.status).toBe(504);
      expect(res.json()).toMatchObject({ error: { code: 'PRE_DELETE_INCOMPLETE', message: expect.stringContaining(`${ns}/config-stuck`) as unknown } });
    } finally {
      await host.close();
      await releaseFinalizers(kube, target);
    }
  });

  it('answers 400 to an apiserver event whose data is not a ModuleConfig, and deletes nothing', async () => {
    const target = kubeVirt(ns, 'config-kept');
    await createTarget(kube, target);
    const host = await served([target], '10s');
    try {
      const res = await moduleConfigChange(host, 'delete', { kind: 'ModuleConfig', metadata: { labels: {} } });
      expect(res.status).toBe(400);
      expect(await read(kube, target)).toBeDefined();
    } finally {
      await host.close();
    }
  });
});
