/** What the DVCR garbage collection tests share: the Deployment `dvcr` whose condition is the run's result, and the run's Secret. */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import type { KubeClient, ResourceClient } from '../../../shared/kube/index.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { TEST_FIELD_MANAGER, eventually, gone, readWhen } from './fixtures.js';

export const GC_SECRET = 'dvcr-garbage-collection';

const DeploymentSchema = z.looseObject({
  metadata: ObjectMetaSchema,
  status: z
    .looseObject({
      conditions: z.array(z.looseObject({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() })).optional(),
    })
    .optional(),
});
export type Deployment = z.infer<typeof DeploymentSchema>;

export function deploymentsClient(kube: KubeClient): ResourceClient<Deployment> {
  return kube.resource({ group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true }, DeploymentSchema, TEST_FIELD_MANAGER);
}

/** The Deployment `dvcr` (no replicas: only its status matters here). */
export async function createDvcrDeployment(deployments: ResourceClient<Deployment>, namespace: string): Promise<void> {
  const labels = { app: 'dvcr' };
  await deployments.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'dvcr', namespace },
    spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'dvcr', image: 'dvcr' }] } } },
  });
}

export const gcCondition = (d: Deployment): { reason?: string | undefined; message?: string | undefined; status: string } | undefined =>
  d.status?.conditions?.find((x) => x.type === 'GarbageCollection');

/** Wait until a run is over (its Secret deleted) with the condition reason given; returns the condition's message. */
export async function runEnds(
  c: Clients,
  deployments: ResourceClient<Deployment>,
  namespace: string,
  reason: 'Completed' | 'Error',
  timeoutMs: number,
): Promise<string> {
  await eventually(() => gone(() => c.secrets.get({ namespace, name: GC_SECRET })), 'the run Secret deleted', timeoutMs);
  const d = await readWhen(
    () => deployments.get({ namespace, name: 'dvcr' }),
    (x) => gcCondition(x)?.reason === reason,
    `GarbageCollection ${reason}`,
    timeoutMs,
  );
  return gcCondition(d)?.message ?? '';
}
