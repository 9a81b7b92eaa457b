import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { preDelete } from '../../../functions/pre-delete/index.js';
import { serve, type ServerHandle } from '../../../shared/runtime/index.js';
import { binaryHeaders, send, type TestResponse } from '../../../shared/runtime/testing/index.js';
import { freshNamespace } from '../../env/index.js';
import { installDeckhouseCrds } from '../../env/index.js';
import { eventDescriptor, eventSchema } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { adminKube, cdi, createTarget, envFor, FINALIZER, kubeVirt, MODULE_CONFIG_NAME, read, releaseFinalizers, setModuleConfig } from './fixtures.js';
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
  metadata: { name: MODULE_CONFIG_NAME },
  spec: { enabled, version: 1 },
});

describe('the pre-delete function on a CloudEvent from the ApiServerSource', () => {
  let ns = '';
  beforeAll(async () => {
    ns = await freshNamespace('pre-delete-fn');
    await installDeckhouseCrds();
  });

  it('refuses a forged deletion event with 409 while the ModuleConfig exists, deleting nothing, and cleans up once it is really deleted', async () => {
    const targets = [kubeVirt(ns, 'config-deleted'), cdi()];
    for (const t of targets) await createTarget(kube, t);
    await setModuleConfig(kube, true);
    const host = await served(targets, '10s');
    try {
      const forged = await moduleConfigChange(host, 'delete', moduleConfig(true));
      expect(forged.status).toBe(409);
      expect(forged.json()).toMatchObject({ error: { code: 'PRE_DELETE_NOT_CONFIRMED', message: expect.stringContaining('spec.enabled: true') as unknown } });
      expect((await Promise.all(targets.map((t) => read(kube, t)))).map((o) => o?.metadata.deletionTimestamp)).toEqual([undefined, undefined]);
      const events = kube.resource(eventDescriptor, eventSchema, 'pre-delete-test');
      const warning = await waitFor('the Warning Event on the ModuleConfig', async () =>
        (await events.list({ namespace: 'default' })).items.find((e) => e.regarding?.name === MODULE_CONFIG_NAME && e.reason === 'PreDeleteRefused'),
      );
      expect(warning).toMatchObject({ type: 'Warning', regarding: { kind: 'ModuleConfig', name: MODULE_CONFIG_NAME } });
      expect(warning.note).toContain('unchecked (SENDER_AUTH=none)');

      await setModuleConfig(kube, undefined);
      expect((await moduleConfigChange(host, 'delete', moduleConfig(true))).status).toBe(204);
      expect(await Promise.all(targets.map((t) => read(kube, t)))).toEqual([undefined, undefined]);
    } finally {
      await host.close();
      await setModuleConfig(kube, undefined);
    }
  });

  it('cleans up on an update that disables the module, once the apiserver has it disabled', async () => {
    const target = kubeVirt(ns, 'config-disabled');
    await createTarget(kube, target);
    await setModuleConfig(kube, false);
    const host = await served([target], '10s');
    try {
      expect((await moduleConfigChange(host, 'update', moduleConfig(false))).status).toBe(204);
      expect(await read(kube, target)).toBeUndefined();
    } finally {
      await host.close();
      await setModuleConfig(kube, undefined);
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
