/**
 * A CRD upgraded under a running informer: the new version of the CRD adds a field, an object is
 * written with it, and the informer (whose schema, like shared/api's, rejects unknown fields) must
 * still deliver it, with the field. A CRD of its own (Gadget), so the Widget tests running beside
 * this file never see their CRD change.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import { Informer, kubeObjectSchema, type KubeClient, type ResourceClient, type ResourceDescriptor } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace } from '../../env/index.js';
import { FIELD_MANAGER, mainClient } from './fixtures.js';

const gadgetDescriptor: ResourceDescriptor = { group: 'test.virtualization.example', version: 'v1', plural: 'gadgets', kind: 'Gadget', namespaced: true };
const crdDescriptor: ResourceDescriptor = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};

/** What this code knows of a Gadget: strict, as shared/api's schemas are. */
const gadgetSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: ObjectMetaSchema,
  spec: z.strictObject({ size: z.number().int() }),
});
type Gadget = z.infer<typeof gadgetSchema>;

function gadgetCrd(specProperties: Record<string, unknown>): unknown {
  return {
    metadata: { name: 'gadgets.test.virtualization.example' },
    spec: {
      group: gadgetDescriptor.group,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', required: ['size'], properties: specProperties } } } },
        },
      ],
    },
  };
}

let client: KubeClient;
let crds: ResourceClient<z.infer<typeof kubeObjectSchema>>;
let gadgets: ResourceClient<Gadget>;

beforeAll(async () => {
  client = mainClient();
  crds = client.resource(crdDescriptor, kubeObjectSchema, FIELD_MANAGER);
  gadgets = client.resource(gadgetDescriptor, gadgetSchema, FIELD_MANAGER);
  await crds.apply(gadgetCrd({ size: { type: 'integer' } }) as z.infer<typeof kubeObjectSchema>, { force: true });
  // Established can precede the REST endpoint by a moment (a failing list is "not yet").
  await waitFor('Gadgets served', async () => (await gadgets.list({ namespace: 'default' })) !== undefined);
});

afterAll(() => client.close());

describe('an informer under a CRD upgrade', () => {
  it('delivers an object written with a field the upgraded CRD added, field included', async () => {
    const ns = await freshNamespace('kube-crd-up');
    await gadgets.create({ apiVersion: '', kind: '', metadata: { namespace: ns, name: 'g' }, spec: { size: 1 } });
    // A short server-side watch timeout: the informer watches again every 1-2 s (client-go does so
    // every 5-10 min), which lets the test know when a watch began after the upgrade.
    const inf = new Informer<Gadget>({ client: gadgets, namespace: ns, backoff: { initialMs: 50, maxMs: 500 }, watchTimeoutSeconds: 1 });
    const updates: Gadget[] = [];
    const invalid: unknown[] = [];
    inf.on('update', (obj) => void updates.push(obj));
    inf.on('invalid', (obj) => void invalid.push(obj));
    inf.start();
    try {
      await inf.synced;
      expect(inf.store.get({ namespace: ns, name: 'g' })?.spec).toEqual({ size: 1 });

      await crds.apply(gadgetCrd({ size: { type: 'integer' }, color: { type: 'string' } }) as z.infer<typeof kubeObjectSchema>, { force: true });
      const patchColor = (dryRun: boolean): Promise<unknown> =>
        client.rest.request({
          method: 'PATCH',
          path: `/apis/${gadgetDescriptor.group}/v1/namespaces/${ns}/gadgets/g`,
          query: { fieldManager: FIELD_MANAGER, dryRun: dryRun ? 'All' : undefined },
          body: { spec: { color: 'red' } },
          contentType: 'application/merge-patch+json',
          what: 'patch Gadget',
        });
      const keepsColor = (raw: unknown): boolean => (raw as { spec?: { color?: string } }).spec?.color === 'red';
      // Until the CRD's new storage serves, the apiserver prunes the field (a dry run changes nothing).
      await waitFor('the apiserver to keep spec.color', async () => keepsColor(await patchColor(true)));
      // Watches the apiserver still serves from the old storage decode with the old schema and prune
      // the field too: wait for a watch begun after the new storage serves (the second one from now).
      const watches = inf.stats.watches;
      await waitFor('the informer to watch again after the upgrade', () => inf.stats.watches >= watches + 2);

      const written = (await patchColor(false)) as Gadget; // a user writes the new field
      expect(keepsColor(written)).toBe(true);
      const delivered = await waitFor('the update with spec.color', () => updates.find((u) => u.metadata.resourceVersion === written.metadata.resourceVersion));
      expect(delivered.spec).toEqual({ size: 1, color: 'red' });
      expect(inf.store.get({ namespace: ns, name: 'g' })?.spec).toEqual({ size: 1, color: 'red' });
      expect([invalid, inf.stats.invalid]).toEqual([[], 0]);
      // The typed client reads it too, instead of failing on the unknown field.
      expect((await gadgets.get({ namespace: ns, name: 'g' })).spec).toEqual({ size: 1, color: 'red' });
    } finally {
      await inf.stop();
    }
  });
});
