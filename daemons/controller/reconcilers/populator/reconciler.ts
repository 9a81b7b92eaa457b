/**
 * The volume populator (key: namespace/name of a PersistentVolumeClaim): a claim annotated with a
 * population strategy whose `dataSourceRef` names a virtualization.deckhouse.io object is filled by an
 * importer Pod once it is Bound (from DVCR, or from another claim of its namespace), then annotated
 * `pvc-population-done: "true"` and its helper removed. The source object must exist the whole time:
 * one that disappears stops the filling (the Pod is deleted), the claim is left unfilled and never
 * marked done, and a Warning Event on the claim says why. A failed importer is reported the same way.
 */
import { errorMessage } from '../../../../shared/errors/index.js';
import type { EventRecorder, KubeObject } from '../../../../shared/kube/index.js';
import { objectKey } from '../../../../shared/kube/index.js';
import type { ReconcileFn, ReconcileResult } from '../../engine/runner.js';
import { removeHelpers, runStep, type StorageDeps } from '../provisioning/helpers.js';
import { dvcrEndpoint } from '../provisioning/importer.js';
import type { PVC } from '../provisioning/kube.js';
import { DONE_ANNOTATION, populationOf, type Population } from './annotations.js';

export const POPULATION_FAILED = 'PopulationFailed';
export const POPULATION_DONE = 'PopulationSucceeded';

type Fill = Extract<Population, { kind: 'fill' }>;

export function populatorReconciler(d: StorageDeps, events: Pick<EventRecorder, 'record'>): ReconcileFn {
  const { caches, clients, settings } = d.storage;
  const report = async (pvc: KubeObject, note: string): Promise<void> => {
    await events.record(pvc, { type: 'Warning', reason: POPULATION_FAILED, action: 'Populate', note });
  };
  const sourceExists = (ref: Fill['ref']): boolean => {
    const key = objectKey({ namespace: ref.namespace, name: ref.name });
    if (ref.kind === 'ClusterVirtualImage') return d.caches.clusterImages.get(ref.name) !== undefined;
    return (ref.kind === 'VirtualImage' ? d.caches.images.get(key) : d.caches.disks.get(key)) !== undefined;
  };
  return async (key, signal): Promise<ReconcileResult | void> => {
    const cached = caches.pvcs.get(key);
    if (cached === undefined) return;
    const pvc: PVC = { ...cached, apiVersion: 'v1', kind: 'PersistentVolumeClaim' };
    const plan = populationOf(pvc);
    if (plan.kind === 'none') return;
    if (plan.kind === 'done') return removeHelpers(d, pvc, signal);
    if (plan.kind === 'invalid') return report(pvc, plan.message);
    const what = `${plan.ref.kind} ${plan.ref.namespace === undefined ? '' : `${plan.ref.namespace}/`}${plan.ref.name}`;
    if (!sourceExists(plan.ref)) {
      await removeHelpers(d, pvc, signal);
      await report(pvc, `the population source ${what} does not exist: the claim is left unfilled`);
      return { requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
    }
    if (pvc.status?.phase !== 'Bound') return;
    const source = plan.source.type === 'registry' ? { ...plan.source, image: dvcrEndpoint(settings, plan.source.image) } : plan.source;
    const ns = pvc.metadata.namespace ?? '';
    const step = await runStep(d, { step: 'pvc', owner: pvc, namespace: ns, source, destination: { type: 'pvc', claimName: pvc.metadata.name ?? '' } }, signal);
    if (step.state === 'running') return { requeueAfterMs: d.config.IMPORT_PROGRESS_INTERVAL };
    if (step.state === 'failed') return report(pvc, `filling from ${what} failed: ${step.reason}: ${step.message}`);
    // The data is in; the source must still be there for the claim to count as filled from it.
    if (!sourceExists(plan.ref)) {
      await removeHelpers(d, pvc, signal);
      await report(pvc, `the population source ${what} disappeared while the claim was filled: it is left unfilled`);
      return;
    }
    try {
      caches.pvcs.remember(
        await clients.pvcs.mergePatch(
          { namespace: ns, name: pvc.metadata.name ?? '' },
          { metadata: { annotations: { [DONE_ANNOTATION]: 'true' }, resourceVersion: pvc.metadata.resourceVersion } },
          { signal },
        ),
      );
    } catch (err: unknown) {
      throw new Error(`marking ${key} populated: ${errorMessage(err)}`, { cause: err });
    }
    await events.record(pvc, { type: 'Normal', reason: POPULATION_DONE, action: 'Populate', note: `filled from ${what}` });
    await removeHelpers(d, pvc, signal);
  };
}
