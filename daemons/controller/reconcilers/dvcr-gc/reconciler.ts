/**
 * DVCR garbage collection, the original's life cycle on the Secret `dvcr-garbage-collection`:
 * the schedule creates it (initiated: new imports are held, ProvisioningPostponed); once no image or
 * disk imports through DVCR it is annotated switch (cleaning); the cleaner deletes what no object owns
 * and annotates done with the result; the result goes to the Deployment `dvcr`'s GarbageCollection
 * condition and the Secret is deleted (held imports go on). A run that waits for imports longer than
 * DVCR_GC_WAIT_TIMEOUT is cancelled with an Error condition.
 */
import { DVCRDeploymentCondition } from '../../../../shared/api/conditions/index.js';
import { AlreadyExistsError, NotFoundError } from '../../../../shared/errors/index.js';
import { conditionalMergePatch, objectKey, type KubeObject, type ResourcePort } from '../../../../shared/kube/index.js';
import type { Logger } from '../../../../shared/log/index.js';
import type { CachePort } from '../../deps.js';
import { setCondition } from '../../engine/conditions.js';
import type { ReconcileFn } from '../../engine/runner.js';
import type { Secret } from '../../kube/resources.js';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import type { Condition } from '../../../../shared/api/k8s/core.js';
import { cleanupDvcr, type DvcrEndpoint } from './cleanup.js';
import { DONE_ANNOTATION, GC_SECRET_NAME, SWITCH_ANNOTATION, gcPhase } from '../provisioning/postpone.js';
import { DVCR_DEPLOYMENT_NAME, RUN_KEY, conditionOfResult, importsInProgress, wantedTags } from './state.js';

const GC = DVCRDeploymentCondition.GarbageCollection;

/** The Deployment `dvcr`, as far as its conditions go. */
export type DvcrDeployment = KubeObject & { status?: { conditions?: Condition[] | undefined } | undefined };

export interface Owners {
  clusterImages: ClusterVirtualImage[];
  images: VirtualImage[];
  disks: VirtualDisk[];
}

export interface DvcrGcDeps {
  namespace: string;
  dvcr: DvcrEndpoint;
  blobGcCommand: string;
  waitTimeoutMs: number;
  pollMs: number;
  secrets: Pick<ResourcePort<Secret>, 'create' | 'mergePatch' | 'delete' | 'replace'>;
  secretCache: Pick<CachePort<Secret>, 'get' | 'remember'>;
  deployments: Pick<ResourcePort<DvcrDeployment>, 'get' | 'mergePatch'>;
  /** Every image and disk of the cluster, read fresh from the apiserver (not the caches: WATCH_NAMESPACE must not hide an owner). */
  owners(signal: AbortSignal): Promise<Owners>;
  /** The images and disks this controller reconciles (its caches): the run waits for their imports. */
  reconciled(): Owners;
  now(): Date;
  log: Logger;
}

export function dvcrGcReconciler(d: DvcrGcDeps): ReconcileFn {
  const secretRef = { namespace: d.namespace, name: GC_SECRET_NAME };
  const secretKey = objectKey(secretRef);

  /** The GarbageCollection condition on the Deployment `dvcr`; without that Deployment the log is the only record. */
  const report = async (reason: keyof typeof GC.reason, message: string, signal: AbortSignal): Promise<void> => {
    const level = reason === 'Error' ? 'warn' : 'info';
    d.log[level]({ reason, message }, `DVCR garbage collection: ${message}`);
    let deploy: DvcrDeployment;
    try {
      deploy = await d.deployments.get({ namespace: d.namespace, name: DVCR_DEPLOYMENT_NAME }, { signal });
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return;
      throw err;
    }
    const old = deploy.status?.conditions?.find((c) => c.type === GC.type);
    if (old?.reason === reason && old.message === message) return;
    const status = reason === 'InProgress' ? 'True' : 'False';
    const now = d.now();
    const conditions = setCondition(deploy.status?.conditions, { type: GC.type, status, reason, message }, now).map((c) =>
      c.type === GC.type ? { ...c, lastUpdateTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z') } : c,
    );
    const patch = conditionalMergePatch({ status: { conditions } }, deploy.metadata.resourceVersion);
    await d.deployments.mergePatch({ namespace: d.namespace, name: DVCR_DEPLOYMENT_NAME }, patch, { subresource: 'status', signal });
  };

  /** The schedule fired: a new run (an unfinished one is reset to initiated, as the original does). */
  const initiate = async (signal: AbortSignal): Promise<void> => {
    const secret: Secret = { apiVersion: 'v1', kind: 'Secret', metadata: { ...secretRef } };
    try {
      d.secretCache.remember(await d.secrets.create(secret, { signal }));
    } catch (err: unknown) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      const current = d.secretCache.get(secretKey);
      if (current === undefined) throw err; // not in the cache yet: requeued, decided again
      d.secretCache.remember(await d.secrets.replace({ ...current, metadata: { ...current.metadata, annotations: {} }, data: {} }, { signal }));
    }
    await report('InProgress', 'Garbage collection initiated.', signal);
  };

  const annotate = async (secret: Secret, annotation: string, data: Record<string, string> | undefined, signal: AbortSignal): Promise<void> => {
    const patch = conditionalMergePatch({ metadata: { annotations: { [annotation]: '' } }, ...(data ? { data } : {}) }, secret.metadata.resourceVersion);
    d.secretCache.remember(await d.secrets.mergePatch(secretRef, patch, { signal }));
  };

  return async (key, signal) => {
    if (key === RUN_KEY) return initiate(signal);
    if (key !== secretKey) return;
    const secret = d.secretCache.get(secretKey);
    const phase = gcPhase(secret);
    if (secret === undefined || phase === 'none') return;

    if (phase === 'done') {
      const raw = secret.data?.['result'];
      const result = conditionOfResult(raw === undefined ? undefined : Buffer.from(raw, 'base64').toString('utf8'));
      await report(result.reason, result.message, signal);
      await d.secrets.delete(secretRef, { signal, preconditions: { uid: secret.metadata.uid } }).catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
      return;
    }

    if (phase === 'cleaning') {
      // The cleaner's part (in the original a process in the DVCR Pod): delete, free blobs, say done.
      const result = await cleanupDvcr(d.dvcr, wantedTags(await d.owners(signal)), d.blobGcCommand, d.log, signal);
      await annotate(secret, DONE_ANNOTATION, { result: Buffer.from(JSON.stringify(result)).toString('base64') }, signal);
      return;
    }

    // Initiated: wait for the imports through DVCR to finish, then switch.
    const remaining = importsInProgress(d.reconciled());
    if (remaining === 0) {
      await annotate(secret, SWITCH_ANNOTATION, undefined, signal);
      await report('InProgress', 'Wait for garbage collection to finish.', signal);
      return;
    }
    const created = Date.parse(secret.metadata.creationTimestamp ?? '');
    const waited = Number.isNaN(created) ? 0 : d.now().getTime() - created;
    if (waited > d.waitTimeoutMs) {
      const message = `Wait for ${String(remaining)} resources provisioners to finish more than ${String(Math.round(d.waitTimeoutMs / 1000))}s timeout: garbage collection canceled.`;
      await report('Error', message, signal);
      await d.secrets.delete(secretRef, { signal, preconditions: { uid: secret.metadata.uid } }).catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
      return;
    }
    await report('InProgress', `Wait for cvi/vi/vd finish provisioning: ${String(remaining)} resources remain.`, signal);
    return { requeueAfterMs: d.pollMs };
  };
}
