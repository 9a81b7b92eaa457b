/**
 * Imports held while DVCR garbage collection runs (the original's postpone handler): an image or a
 * disk that imports through DVCR and has not started (no Ready condition yet) gets Ready=False
 * `ProvisioningPostponed` and waits; once the run is done the condition is removed and it goes on.
 * Imports already under way are not touched: the run waits for them instead (reconcilers/dvcr-gc).
 */
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import { objectKey } from '../../../../shared/kube/index.js';
import type { Condition } from '../../../../shared/api/k8s/core.js';
import type { Scope } from '../../caches.js';
import { conditionOn, findCondition, removeCondition } from '../../engine/conditions.js';
import type { Handler, HandlerOutcome } from '../../engine/reconciler.js';
import type { Secret } from '../../kube/resources.js';

export const GC_SECRET_NAME = 'dvcr-garbage-collection';
/** Set by the controller once no import runs: DVCR may be cleaned (the original's name). */
export const SWITCH_ANNOTATION = 'virtualization.deckhouse.io/dvcr-deployment-switch-to-maintenance-mode';
/** Set by the cleaner when it is finished, with the result in `data.result` (the original's name). */
export const DONE_ANNOTATION = 'virtualization.deckhouse.io/dvcr-garbage-collection-done';
export const POSTPONED_REASON = 'ProvisioningPostponed';

export type GcPhase = 'none' | 'initiated' | 'cleaning' | 'done';

/** Where a run stands, from its Secret: created (initiated), switched (cleaning), done. */
export function gcPhase(secret: Secret | undefined): GcPhase {
  if (secret === undefined || secret.metadata.deletionTimestamp !== undefined) return 'none';
  const ann = secret.metadata.annotations ?? {};
  if (DONE_ANNOTATION in ann) return 'done';
  if (SWITCH_ANNOTATION in ann) return 'cleaning';
  return 'initiated';
}

export interface DvcrGcPort {
  /** A run is initiated or cleaning: imports that have not started wait. */
  holdsImports(): boolean;
}

export const dvcrGcSecretScope = (namespace: string): Scope => ({ namespace, fieldSelector: `metadata.name=${GC_SECRET_NAME}` });

export function dvcrGcPort(cache: { get(key: string): Secret | undefined }, namespace: string): DvcrGcPort {
  const key = objectKey({ namespace, name: GC_SECRET_NAME });
  return {
    holdsImports: () => {
      const phase = gcPhase(cache.get(key));
      return phase === 'initiated' || phase === 'cleaning';
    },
  };
}

/** A disk whose import goes through DVCR first (HTTP, registry, upload, or an image). */
export function diskUsesDvcr(vd: VirtualDisk): boolean {
  const ds = vd.spec.dataSource;
  if (ds === undefined) return false;
  if (ds.type === 'HTTP' || ds.type === 'ContainerImage' || ds.type === 'Upload') return true;
  const kind = ds.type === 'ObjectRef' ? ds.objectRef?.kind : undefined;
  return kind === 'VirtualImage' || kind === 'ClusterVirtualImage';
}

interface PostponeState {
  readonly obj: { metadata: { generation?: number | undefined }; status?: { conditions?: Condition[] | undefined } | undefined };
  status: { conditions?: Condition[] | undefined; phase?: string | undefined };
}

/** The handler, placed before provisioning starts; `applies` narrows it (disks: only those through DVCR). */
export function postponeHandler<S extends PostponeState>(port: DvcrGcPort | undefined, recheckMs: number, applies: (s: S) => boolean = () => true): Handler<S> {
  return {
    name: 'postpone-on-dvcr-gc',
    handle(s, ctx): HandlerOutcome | void {
      if (port === undefined || !applies(s)) return;
      const ready = findCondition(s.obj.status?.conditions, 'Ready');
      const postponed = ready?.reason === POSTPONED_REASON;
      if (ready !== undefined && !postponed) return; // already started: the run waits for it instead
      if (!port.holdsImports()) {
        if (postponed) {
          s.status.conditions = removeCondition(s.status.conditions, 'Ready');
          ctx.log.info('DVCR garbage collection is over: the import goes on');
        }
        return;
      }
      if (!postponed) {
        conditionOn(s, ctx, {
          type: 'Ready',
          status: 'False',
          reason: POSTPONED_REASON,
          message: 'DVCR is in garbage collection mode: wait until it finishes before creating provisioner.',
        });
        s.status.phase = 'Pending';
        ctx.log.info('DVCR garbage collection is running: the import is postponed');
      }
      return { stop: true, requeueAfterMs: recheckMs };
    },
  };
}
