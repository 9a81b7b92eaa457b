/**
 * The volume populator (key: namespace/name of a PersistentVolumeClaim), as the original's
 * populator-controller works: a claim annotated with a population strategy whose `dataSourceRef`
 * names a virtualization.deckhouse.io object is not provisioned by the storage (a provisioner leaves
 * such a claim to its populator). The populator makes `<claim>-prime` (the same spec, no data source,
 * owned by the claim, excluded from quota), fills it with an importer Pod (from DVCR, or from another
 * claim of the namespace; a Block claim as a device), then hands the filled volume to the claim
 * (the volume's claimRef moved to it; kube-controller-manager binds them), deletes the prime, and
 * annotates the claim `pvc-population-done: "true"`.
 *
 * Bad input never fills or marks a claim; a Warning `PopulationFailed` Event on it says why: a
 * dataSourceRef of another group or kind, a missing source annotation, an unknown strategy, a source
 * object that does not exist (or disappears while filling: the importer and the prime are deleted),
 * a failed importer.
 */
import { errorMessage } from '../../../../shared/errors/index.js';
import type { KubeObject } from '../../../../shared/kube/index.js';
import type { EventPort } from '../../deps.js';
import { objectKey, ownerReferenceTo } from '../../../../shared/kube/index.js';
import type { ReconcileFn, ReconcileResult } from '../../engine/runner.js';
import { deleteIgnoringMissing, removeHelpers, runStep, type StorageDeps } from '../provisioning/helpers.js';
import { dvcrEndpoint, helperPodName, outcomeOf } from '../provisioning/importer.js';
import { ensurePVC } from '../provisioning/pvc.js';
import type { PVC } from '../provisioning/kube.js';
import { DONE_ANNOTATION, populationOf, primeName, type Population, type PopulationRef } from './annotations.js';

export const POPULATION_FAILED = 'PopulationFailed';
export const POPULATION_DONE = 'PopulationSucceeded';
/** The original's label that keeps helper claims and Pods out of a namespace's quota. */
export const QUOTA_EXCLUDE_LABEL = 'resource-quota-overrides.deckhouse.io/ignore';

type Fill = Extract<Population, { kind: 'fill' }>;

const describeRef = (ref: PopulationRef): string => `${ref.kind} ${ref.namespace === undefined ? '' : `${ref.namespace}/`}${ref.name}`;

/** The prime claim of `target`: its storage spec without a data source or volume, owned by it. */
export function primeOf(target: PVC): PVC {
  const spec = { ...target.spec };
  delete spec.dataSourceRef;
  delete spec.dataSource;
  delete spec.volumeName;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: primeName(target.metadata.name ?? ''),
      namespace: target.metadata.namespace,
      labels: { [QUOTA_EXCLUDE_LABEL]: 'true' },
      ownerReferences: [{ ...ownerReferenceTo(target, { controller: true, blockOwnerDeletion: true }) }],
    },
    spec,
  };
}

export function populatorReconciler(d: StorageDeps, events: EventPort): ReconcileFn {
  const { caches, clients, settings } = d.storage;
  const report = async (pvc: KubeObject, note: string): Promise<void> => {
    await events.record(pvc, { type: 'Warning', reason: POPULATION_FAILED, action: 'Populate', note });
  };
  const sourceExists = (ref: PopulationRef): boolean => {
    const key = objectKey({ namespace: ref.namespace, name: ref.name });
    if (ref.kind === 'ClusterVirtualImage') return d.caches.clusterImages.get(ref.name) !== undefined;
    return (ref.kind === 'VirtualImage' ? d.caches.images.get(key) : d.caches.disks.get(key)) !== undefined;
  };
  const primeKey = (pvc: PVC): string => objectKey({ namespace: pvc.metadata.namespace, name: primeName(pvc.metadata.name ?? '') });
  /** Delete the importer and the prime (a population abandoned or finished). */
  const cleanUp = async (pvc: PVC, signal: AbortSignal): Promise<void> => {
    await removeHelpers(d, pvc, signal);
    if (caches.pvcs.get(primeKey(pvc)) === undefined) return;
    const ref = { namespace: pvc.metadata.namespace, name: primeName(pvc.metadata.name ?? '') };
    await deleteIgnoringMissing(() => clients.pvcs.delete(ref, { signal }));
  };

  /** The filled prime's volume given to the target: its claimRef names the target (kube-controller-manager binds them). */
  const handOver = async (target: PVC, prime: PVC, signal: AbortSignal): Promise<void> => {
    const volume = prime.spec.volumeName ?? '';
    const pv = await clients.pvs.get({ name: volume }, { signal });
    if (pv.spec.claimRef?.uid === target.metadata.uid) return;
    const claimRef = {
      kind: 'PersistentVolumeClaim',
      apiVersion: 'v1',
      namespace: target.metadata.namespace,
      name: target.metadata.name,
      uid: target.metadata.uid,
    };
    try {
      await clients.pvs.mergePatch({ name: volume }, { spec: { claimRef: { ...claimRef, resourceVersion: null } } }, { signal });
    } catch (err: unknown) {
      throw new Error(`handing volume ${volume} to ${objectKey(target.metadata)}: ${errorMessage(err)}`, { cause: err });
    }
  };

  const markDone = async (pvc: PVC, what: string, signal: AbortSignal): Promise<void> => {
    try {
      caches.pvcs.remember(
        await clients.pvcs.mergePatch(
          { namespace: pvc.metadata.namespace, name: pvc.metadata.name ?? '' },
          { metadata: { annotations: { [DONE_ANNOTATION]: 'true' }, resourceVersion: pvc.metadata.resourceVersion } },
          { signal },
        ),
      );
    } catch (err: unknown) {
      throw new Error(`marking ${objectKey(pvc.metadata)} populated: ${errorMessage(err)}`, { cause: err });
    }
    await events.record(pvc, { type: 'Normal', reason: POPULATION_DONE, action: 'Populate', note: `filled from ${what}` });
    await cleanUp(pvc, signal);
  };

  const fill = async (pvc: PVC, plan: Fill, signal: AbortSignal): Promise<ReconcileResult | void> => {
    const what = describeRef(plan.ref);
    if (!sourceExists(plan.ref)) {
      await cleanUp(pvc, signal);
      await report(pvc, `the population source ${what} does not exist: the claim is left unfilled`);
      return { requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
    }
    if (pvc.status?.phase === 'Bound') {
      // Bound after the hand-over (the importer finished): complete. Bound otherwise: the storage
      // provisioned the claim itself, and nothing of the source is in it.
      const helper = caches.helperPods.get(objectKey({ namespace: pvc.metadata.namespace, name: helperPodName('pvc', pvc) }));
      if (helper !== undefined && outcomeOf(helper).state === 'succeeded') return markDone(pvc, what, signal);
      await cleanUp(pvc, signal);
      return report(
        pvc,
        `the claim was bound to a volume before it was filled from ${what} (its storage does not leave populator claims to the populator): it is left unfilled`,
      );
    }
    const prime = await ensurePVC(d, primeOf(pvc), signal);
    if (prime.status?.phase !== 'Bound' || (prime.spec.volumeName ?? '') === '') return;
    const ns = pvc.metadata.namespace ?? '';
    const source = plan.source.type === 'registry' ? { ...plan.source, image: dvcrEndpoint(settings, plan.source.image) } : plan.source;
    const step = await runStep(
      d,
      { step: 'pvc', owner: pvc, namespace: ns, source, destination: { type: 'pvc', claimName: prime.metadata.name ?? '', volumeMode: prime.spec.volumeMode } },
      signal,
    );
    if (step.state === 'running') return { requeueAfterMs: d.config.IMPORT_PROGRESS_INTERVAL };
    if (step.state === 'failed') return report(pvc, `filling from ${what} failed: ${step.reason}: ${step.message}`);
    // The data is in the prime; the source must still be there for the claim to count as filled from it.
    if (!sourceExists(plan.ref)) {
      await cleanUp(pvc, signal);
      await report(pvc, `the population source ${what} disappeared while the claim was filled: it is left unfilled`);
      return;
    }
    await handOver(pvc, prime, signal);
    return { requeueAfterMs: d.config.IMPORT_PROGRESS_INTERVAL };
  };

  return async (key, signal): Promise<ReconcileResult | void> => {
    const cached = caches.pvcs.get(key);
    if (cached === undefined || cached.metadata.deletionTimestamp !== undefined) return;
    const pvc: PVC = { ...cached, apiVersion: 'v1', kind: 'PersistentVolumeClaim' };
    const plan = populationOf(pvc);
    if (plan.kind === 'none') return;
    if (plan.kind === 'done') return cleanUp(pvc, signal);
    if (plan.kind === 'invalid') return report(pvc, plan.message);
    return fill(pvc, plan, signal);
  };
}
