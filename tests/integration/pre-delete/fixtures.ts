import { randomBytes } from 'node:crypto';
import { internalCDI, internalKubeVirt, type ResourceDefinition } from '../../../shared/api/index.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import { KubeClient, descriptorOf, kubeObjectSchema, type KubeObject, type ResourceClient } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import type { Target } from '../../../functions/pre-delete/config.js';
import { getTestEnv } from '../../env/index.js';

export const FINALIZER = 'kubevirt.internal.virtualization.deckhouse.io/test-holds';

/** The internal KubeVirt configuration object `name` in `namespace`. */
export const kubeVirt = (namespace: string, name = 'config'): Target => ({ gvr: gvrOf(internalKubeVirt), namespace, name });

/** A cluster-scoped CDI object; a unique name, since tests share the cluster scope. */
export const cdi = (name = `config-${randomBytes(4).toString('hex')}`): Target => ({ gvr: gvrOf(internalCDI), name });

function gvrOf(def: ResourceDefinition): Target['gvr'] {
  return { group: def.group, version: def.version, resource: def.plural };
}

const DEFINITIONS = [internalKubeVirt, internalCDI];

/** Admin access to the test apiserver through the same client library the function uses. */
export function adminKube(): KubeClient {
  return KubeClient.fromSource({ kubeconfigPath: getTestEnv().kubeconfigPath });
}

function clientFor(kube: KubeClient, target: Target): ResourceClient<KubeObject> {
  const def = DEFINITIONS.find((d) => d.plural === target.gvr.resource);
  if (def === undefined) throw new Error(`no test definition for ${target.gvr.resource}`);
  return kube.resource(descriptorOf(def), kubeObjectSchema, 'pre-delete-test');
}

const refOf = (t: Target): { name: string; namespace?: string | undefined } => ({ name: t.name, namespace: t.namespace });

export async function createTarget(kube: KubeClient, target: Target, finalizers: string[] = []): Promise<KubeObject> {
  return clientFor(kube, target).create({ metadata: { name: target.name, namespace: target.namespace, finalizers }, spec: {} } as KubeObject);
}

/** The object, or undefined when it is gone. */
export async function read(kube: KubeClient, target: Target): Promise<KubeObject | undefined> {
  try {
    return await clientFor(kube, target).get(refOf(target));
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** Wait until deletion of the object was requested (deletionTimestamp set). */
export async function deletionRequested(kube: KubeClient, target: Target): Promise<void> {
  await waitFor(`deletion of ${target.name} requested`, async () => (await read(kube, target))?.metadata.deletionTimestamp !== undefined);
}

/** What a finalizer's controller does when its work is done. */
export async function releaseFinalizers(kube: KubeClient, target: Target): Promise<void> {
  await clientFor(kube, target).mergePatch(refOf(target), { metadata: { finalizers: null } });
}

/**
 * The ModuleConfig these tests remove: a name of their own, since ModuleConfigs are cluster-scoped and
 * other tests of the shared cluster create `virtualization`.
 */
export const MODULE_CONFIG_NAME = `virtualization-${randomBytes(3).toString('hex')}`;

/**
 * Environment of the function or Job aimed at these targets, on the test apiserver. Senders are not
 * checked (SENDER_AUTH=none) here: tests/integration/pre-delete/senders.test.ts sets SENDER_AUTH=kubernetes.
 */
export function envFor(targets: Target[], waitTimeout: string): Record<string, string> {
  return {
    KUBECONFIG: getTestEnv().kubeconfigPath,
    RESOURCES: JSON.stringify(targets),
    WAIT_TIMEOUT: waitTimeout,
    POLL_INTERVAL: '100ms',
    MODULE_CONFIG_NAME,
    SENDER_AUTH: 'none',
  };
}

const moduleConfigs = (kube: KubeClient): ResourceClient<KubeObject> =>
  kube.resource(
    { group: 'deckhouse.io', version: 'v1alpha1', plural: 'moduleconfigs', kind: 'ModuleConfig', namespaced: false },
    kubeObjectSchema,
    'pre-delete-test',
  );

/** The test's ModuleConfig as the apiserver should have it: `enabled` true or false, or absent (undefined). */
export async function setModuleConfig(kube: KubeClient, enabled: boolean | undefined, name = MODULE_CONFIG_NAME): Promise<void> {
  const client = moduleConfigs(kube);
  if (enabled === undefined) {
    await client.delete({ name }).catch((err: unknown) => {
      if (!(err instanceof NotFoundError)) throw err;
    });
    await waitFor(
      `ModuleConfig ${name} gone`,
      async () =>
        (await client.get({ name }).then(
          () => false,
          (err: unknown) => err instanceof NotFoundError,
        )) || undefined,
    );
    return;
  }
  await client.apply({ apiVersion: 'deckhouse.io/v1alpha1', kind: 'ModuleConfig', metadata: { name }, spec: { enabled, version: 1 } } as KubeObject, {
    force: true,
  });
}
