/**
 * The pre-delete function: when the `virtualization` ModuleConfig is deleted or disabled, delete the
 * internal KubeVirt and CDI configuration objects and wait until they are gone. Answers 204 when done
 * (or when the event is not about that), 504/502 when the deadline passed or a call failed, so that
 * the Trigger redelivers. The same clean-up runs as a one-shot Job from job.ts. See README.md.
 */
import { KubeClient } from '../../shared/kube/index.js';
import { defineFunction, runIfMain } from '../../shared/runtime/index.js';
import { deleteAndWait, type TargetStore } from './cleanup.js';
import { preDeleteConfig } from './config.js';
import { decide } from './event.js';
import { KubeTargetStore } from './kube-store.js';
import { CleanupIncompleteError, logReport } from './report.js';

export interface PreDeleteState {
  readonly store: TargetStore & { close(): void };
}

export const preDelete = defineFunction({
  name: 'pre-delete',
  config: preDeleteConfig,
  init: ({ config }): PreDeleteState => ({ store: new KubeTargetStore(KubeClient.fromSource({ kubeconfigPath: config.KUBECONFIG })) }),
  handle: async (event, { config, state, log, signal }) => {
    const decision = decide(event, config.MODULE_CONFIG_NAME);
    if (!decision.act) {
      log.debug({ type: event.type, why: decision.why }, 'event ignored');
      return;
    }
    log.info({ why: decision.why }, `ModuleConfig ${config.MODULE_CONFIG_NAME} ${decision.why}: removing the KubeVirt and CDI configuration`);
    const report = await deleteAndWait(config.RESOURCES, state.store, { timeoutMs: config.WAIT_TIMEOUT, pollMs: config.POLL_INTERVAL, signal });
    logReport(log, report);
    if (!report.ok) throw new CleanupIncompleteError(report);
  },
  readiness: () => true,
  shutdown: ({ state }) => state.store.close(),
});

runIfMain(import.meta.url, preDelete);
