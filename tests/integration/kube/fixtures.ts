/**
 * Shared fixtures for the shared/kube integration tests: a small test CRD (Widget, group
 * test.virtualization.example, with a status subresource) installed once per run with server-side
 * apply, and its zod schema.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import { KubeClient, kubeObjectSchema, type ResourceClient, type ResourceDescriptor } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace, newKubeConfig } from '../../env/index.js';

export const FIELD_MANAGER = 'kube-integration-test';

export const widgetDescriptor: ResourceDescriptor = {
  group: 'test.virtualization.example',
  version: 'v1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: true,
};

export const widgetSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({ size: z.number().int(), color: z.string().optional() }),
  status: z.looseObject({ phase: z.string().optional(), observedGeneration: z.number().int().optional() }).optional(),
});
export type Widget = z.infer<typeof widgetSchema>;

const crdDescriptor: ResourceDescriptor = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};

const widgetCrd = {
  metadata: { name: 'widgets.test.virtualization.example' },
  spec: {
    group: widgetDescriptor.group,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                properties: { size: { type: 'integer', minimum: 0 }, color: { type: 'string' } },
              },
              status: {
                type: 'object',
                properties: { phase: { type: 'string' }, observedGeneration: { type: 'integer' } },
              },
            },
          },
        },
      },
    ],
  },
};

/** A client on the run's main apiserver. Close it in afterAll. */
export function mainClient(): KubeClient {
  return new KubeClient(newKubeConfig());
}

export function widgets(client: KubeClient): ResourceClient<Widget> {
  return client.resource(widgetDescriptor, widgetSchema, FIELD_MANAGER);
}

/** Install the Widget CRD (idempotent across workers) and wait until it is Established and served. */
export async function ensureWidgetCrd(client: KubeClient): Promise<void> {
  const crds = client.resource(crdDescriptor, kubeObjectSchema, FIELD_MANAGER);
  await crds.apply(widgetCrd, { force: true });
  await waitFor('the Widget CRD Established', async () => {
    const crd = (await crds.get({ name: widgetCrd.metadata.name })) as { status?: { conditions?: { type: string; status: string }[] } };
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  });
  // Established can precede the REST endpoint by a moment (a failing list is "not yet").
  await waitFor('Widgets served', async () => (await widgets(client).list({ namespace: 'default' })) !== undefined);
}

export interface WidgetSuite {
  client: KubeClient;
  api: ResourceClient<Widget>;
  /** A fresh namespace for the file (empty when no prefix was given). */
  ns: string;
}

/**
 * Register beforeAll/afterAll for a test file: a client on the main apiserver, the Widget CRD, a
 * Widget client, and optionally a fresh namespace. The returned object is filled in by beforeAll.
 */
export function useWidgets(namespacePrefix?: string): WidgetSuite {
  const suite = {} as WidgetSuite;
  beforeAll(async () => {
    suite.client = mainClient();
    await ensureWidgetCrd(suite.client);
    suite.api = widgets(suite.client);
    suite.ns = namespacePrefix === undefined ? '' : await freshNamespace(namespacePrefix);
  });
  afterAll(() => suite.client.close());
  return suite;
}

export function newWidget(namespace: string, name: string, size = 1): Widget {
  return { metadata: { namespace, name }, spec: { size } };
}
