import { z } from 'zod';
import { ConditionSchema } from '../../../../shared/api/k8s/core.js';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import { objectKey, type KubeObject } from '../../../../shared/kube/index.js';
import type { ReconcilerDeclaration, Wiring } from '../../declaration.js';
import type { ObjectCache } from '../../engine/cache.js';
import { FIELD_MANAGER } from '../../kube/resources.js';
import { enqueueOn } from '../../sources.js';
import { storageParts } from '../provisioning/parts.js';
import { GC_SECRET_NAME } from '../provisioning/postpone.js';
import { dvcrGcReconciler, type DvcrDeployment } from './reconciler.js';
import { CronTimer, chooseSchedule } from './schedule.js';
import { RUN_KEY } from './state.js';

const DeploymentSchema: z.ZodType<DvcrDeployment> = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  status: z
    .looseObject({ conditions: z.array(ConditionSchema.loose().partial({ lastTransitionTime: true, message: true, reason: true })).optional() })
    .optional(),
}) as unknown as z.ZodType<DvcrDeployment>;

function reconcile(w: Wiring): ReturnType<ReconcilerDeclaration['reconcile']> {
  const { config, clients } = w;
  const parts = w.shared(storageParts);
  const deployments = w.kube.resource(
    { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true },
    DeploymentSchema,
    FIELD_MANAGER,
  );
  return dvcrGcReconciler({
    namespace: config.POD_NAMESPACE,
    dvcr: { scheme: config.DVCR_PLAIN_HTTP ? 'http' : 'https', registry: config.DVCR_ADDRESS, options: { tls: { insecure: true } } },
    blobGcCommand: config.DVCR_GC_COMMAND,
    waitTimeoutMs: config.DVCR_GC_WAIT_TIMEOUT,
    pollMs: config.DEPENDENCY_RECHECK_INTERVAL,
    secrets: clients.secrets,
    secretCache: parts.gcSecrets,
    deployments,
    owners: async (signal) => {
      const [clusterImages, images, disks] = await Promise.all([
        clients.clusterImages.list({ signal }),
        clients.images.list({ signal }),
        clients.disks.list({ signal }),
      ]);
      return { clusterImages: clusterImages.items, images: images.items, disks: disks.items };
    },
    reconciled: () => ({ clusterImages: w.caches.clusterImages.list(), images: w.caches.images.list(), disks: w.caches.disks.list() }),
    now: () => new Date(),
    log: w.log.child({ controller: 'dvcr-gc' }),
  });
}

/**
 * DVCR garbage collection (keys: the run's Secret `<POD_NAMESPACE>/dvcr-garbage-collection`, and the
 * schedule's `__cron_source__/run-gc`): the schedule from the ModuleConfig or DVCR_GC_SCHEDULE.
 */
export const dvcrGcDeclaration: ReconcilerDeclaration = {
  name: 'dvcr-gc',
  workers: () => 1,
  enabled: (f) => f.storage,
  caches: (w) => w.shared(storageParts).all,
  reconcile,
  sources(w, enqueue) {
    const secretKey = objectKey({ namespace: w.config.POD_NAMESPACE, name: GC_SECRET_NAME });
    enqueueOn(w.shared(storageParts).gcSecrets as unknown as ObjectCache<KubeObject>, enqueue, () => [secretKey]);
    const log = w.log.child({ controller: 'dvcr-gc' });
    const timer = new CronTimer(() => enqueue(RUN_KEY));
    let last = '';
    const apply = (): void => {
      const choice = chooseSchedule(w.config.DVCR_GC_SCHEDULE, w.cidrs.settings());
      const said = `${choice.kind}:${choice.kind === 'on' ? choice.schedule.text : choice.kind === 'invalid' ? choice.message : ''}`;
      if (said === last) return;
      last = said;
      if (choice.kind === 'on') {
        timer.start(choice.schedule);
        log.info({ schedule: choice.schedule.text, from: choice.source }, 'DVCR garbage collection scheduled');
      } else {
        timer.stop();
        if (choice.kind === 'invalid') log.error({ from: choice.source }, `DVCR garbage collection is off: ${choice.message}`);
        else log.info({ from: choice.source }, 'DVCR garbage collection is off (no schedule)');
      }
    };
    apply();
    w.cidrs.onChange(apply);
    w.signal.addEventListener('abort', () => timer.stop(), { once: true });
  },
};
