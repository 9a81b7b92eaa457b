/**
 * Who may send pre-delete its CloudEvents, against the real apiserver with real ServiceAccount tokens
 * and the install's sender RBAC (knative/rbac/components/senders.yaml, applied as it is): an event
 * without a credential is 401, a token for another audience is 401, a ServiceAccount without
 * `create predeleteevents` is 403 (nothing deleted, nothing recorded on the ModuleConfig). The
 * Trigger's OIDC ServiceAccount is heard; a forged deletion it delivers while the ModuleConfig exists
 * is 409 with a Warning Event naming it, and the real deletion still cleans up.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { preDelete } from '../../../functions/pre-delete/index.js';
import { PRE_DELETE_SENDER, KubeReviewer } from '../../../shared/authz/index.js';
import { eventDescriptor, eventSchema, type KubeClient } from '../../../shared/kube/index.js';
import { serve, type ServerHandle } from '../../../shared/runtime/index.js';
import { binaryHeaders, send, type TestResponse } from '../../../shared/runtime/testing/index.js';
import { AlreadyExistsError } from '../../../shared/errors/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace, installDeckhouseCrds } from '../../env/index.js';
import { applyFromKnative, createServiceAccount, MODULE_NAMESPACE, serviceAccountToken } from '../metrics-auth/fixtures.js';
import { adminKube, cdi, createTarget, envFor, kubeVirt, MODULE_CONFIG_NAME, read, setModuleConfig } from './fixtures.js';
import type { Target } from '../../../functions/pre-delete/config.js';

/** The audience of the Triggers' OIDC tokens (knative/eventing/pre-delete-triggers.yaml). */
const AUDIENCE = 'virtualization-pre-delete';
/** The OIDC identity Knative gives the Trigger `pre-delete-on-delete`, bound in the install. */
const TRIGGER_SA = 'pre-delete-on-delete-oidc-eventing.knative.dev-trigger';
const TRIGGER_USER = `system:serviceaccount:${MODULE_NAMESPACE}:${TRIGGER_SA}`;

const kube = adminKube();
afterAll(() => kube.close());

const moduleConfig = { apiVersion: 'deckhouse.io/v1alpha1', kind: 'ModuleConfig', metadata: { name: MODULE_CONFIG_NAME }, spec: { enabled: true, version: 1 } };

function forgedDeletion(host: ServerHandle, token?: string): Promise<TestResponse> {
  const headers = binaryHeaders({ id: 'forged-delete', type: 'dev.knative.apiserver.resource.delete', source: 'https://10.96.0.1:443' });
  return send(host.url, {
    method: 'POST',
    headers: token === undefined ? headers : { ...headers, authorization: `Bearer ${token}` },
    body: JSON.stringify(moduleConfig),
  });
}

async function refusals(kube: KubeClient): Promise<string[]> {
  const events = kube.resource(eventDescriptor, eventSchema, 'pre-delete-test');
  return (await events.list({ namespace: 'default' })).items
    .filter((e) => e.regarding?.name === MODULE_CONFIG_NAME && e.reason === 'PreDeleteRefused')
    .map((e) => e.note ?? '');
}

async function checks(host: ServerHandle, result: string): Promise<number> {
  const text = await (await fetch(`${host.url}/metrics`)).text();
  return Number(new RegExp(`^sender_checks_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
}

describe('the senders pre-delete hears', () => {
  let ns = '';
  let targets: Target[] = [];
  let host: ServerHandle;
  const tokens = { trigger: '', triggerOtherAudience: '', stranger: '' };

  beforeAll(async () => {
    await installDeckhouseCrds();
    await applyFromKnative('namespace.yaml');
    // Knative makes the Trigger's OIDC ServiceAccount; here the test does (once per cluster).
    await createServiceAccount(kube, MODULE_NAMESPACE, TRIGGER_SA).catch((err: unknown) => {
      if (!(err instanceof AlreadyExistsError)) throw err;
    });
    await applyFromKnative('rbac/components/senders.yaml');
    ns = await freshNamespace('pre-delete-senders');
    await createServiceAccount(kube, ns, 'stranger');
    const reviewer = new KubeReviewer(kube.rest);
    await waitFor(
      `${TRIGGER_USER} to be allowed create predeleteevents`,
      async () =>
        (
          await reviewer.authorize(
            { username: TRIGGER_USER, groups: ['system:serviceaccounts', 'system:authenticated'] },
            { resourceAttributes: PRE_DELETE_SENDER },
          )
        ).allowed || undefined,
    );
    tokens.trigger = await serviceAccountToken(kube, MODULE_NAMESPACE, TRIGGER_SA, { audiences: [AUDIENCE] });
    tokens.triggerOtherAudience = await serviceAccountToken(kube, MODULE_NAMESPACE, TRIGGER_SA);
    tokens.stranger = await serviceAccountToken(kube, ns, 'stranger', { audiences: [AUDIENCE] });
    targets = [kubeVirt(ns, 'config'), cdi()];
    for (const t of targets) await createTarget(kube, t);
    await setModuleConfig(kube, true);
    host = await serve(preDelete, {
      env: { ...envFor(targets, '10s'), SENDER_AUTH: 'kubernetes', SENDER_AUDIENCES: AUDIENCE, METRICS_AUTH: 'none', PORT: '0', HOST: '127.0.0.1' },
    });
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    await setModuleConfig(kube, undefined);
  });

  const untouched = async (): Promise<void> => {
    expect((await Promise.all(targets.map((t) => read(kube, t)))).map((o) => o !== undefined && o.metadata.deletionTimestamp === undefined)).toEqual([
      true,
      true,
    ]);
  };

  it('answers a forged deletion with 401 without a credential or with a token for another audience, and 403 for a ServiceAccount without the rule, deleting and recording nothing', async () => {
    const before: [number, number] = [await checks(host, 'unauthenticated'), await checks(host, 'forbidden')];
    const answers = [await forgedDeletion(host), await forgedDeletion(host, tokens.triggerOtherAudience), await forgedDeletion(host, tokens.stranger)];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 403]);
    expect(answers[2]?.json()).toMatchObject({
      error: { code: 'FORBIDDEN', message: expect.stringContaining('may not create predeleteevents.virtualization.deckhouse.io') as unknown },
    });
    await untouched();
    expect(await refusals(kube)).toEqual([]);
    expect([await checks(host, 'unauthenticated'), await checks(host, 'forbidden')]).toEqual([before[0] + 2, before[1] + 1]);
  });

  it("answers a forged deletion from the Trigger's OIDC identity with 409 while the ModuleConfig exists, with a Warning Event naming that identity, and cleans up once it is really deleted", async () => {
    const forged = await forgedDeletion(host, tokens.trigger);
    expect(forged.status).toBe(409);
    expect(forged.json()).toMatchObject({ error: { code: 'PRE_DELETE_NOT_CONFIRMED' } });
    await untouched();
    const notes = await waitFor('the Warning Event on the ModuleConfig', async () => {
      const found = await refusals(kube);
      return found.length > 0 ? found : undefined;
    });
    expect(notes).toEqual([expect.stringContaining(`'${TRIGGER_USER}'`)]);

    await setModuleConfig(kube, undefined);
    expect((await forgedDeletion(host, tokens.trigger)).status).toBe(204);
    expect(await Promise.all(targets.map((t) => read(kube, t)))).toEqual([undefined, undefined]);
  });
});
