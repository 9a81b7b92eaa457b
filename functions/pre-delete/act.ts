/**
 * One clean-up as both entries run it (the function on a CloudEvent, the Job once): ask the apiserver
 * first, clean up only when it agrees, and ask again before reporting a clean-up that did not finish
 * in time (a ModuleConfig enabled again meanwhile turns the failure into a refusal, so the sender
 * stops retrying).
 */
import { KubeClient, eventDescriptor, eventSchema, EventRecorder } from '../../shared/kube/index.js';
import type { Logger } from '../../shared/log/index.js';
import { deleteAndWait, type CleanupReport, type TargetStore } from './cleanup.js';
import type { PreDeleteConfig } from './config.js';
import { confirmRemoval, moduleConfigReader, moduleConfigSchema, refuse, type ModuleConfigReader, type RemovalNotConfirmedError } from './confirm.js';
import { KubeTargetStore } from './kube-store.js';
import { logReport } from './report.js';

export const FIELD_MANAGER = 'virtualization-pre-delete';

/** What a clean-up talks to. */
export interface PreDeletePorts {
  readonly store: TargetStore;
  readonly moduleConfigs: ModuleConfigReader;
  readonly events: Pick<EventRecorder, 'record'>;
  close(): void;
}

export function kubePorts(kubeconfigPath: string | undefined, log: Logger): PreDeletePorts {
  const kube = KubeClient.fromSource({ kubeconfigPath });
  return {
    store: new KubeTargetStore(kube),
    moduleConfigs: moduleConfigReader(
      kube.resource(
        { group: 'deckhouse.io', version: 'v1alpha1', plural: 'moduleconfigs', kind: 'ModuleConfig', namespaced: false },
        moduleConfigSchema,
        FIELD_MANAGER,
      ),
    ),
    events: new EventRecorder({
      events: kube.resource(eventDescriptor, eventSchema, FIELD_MANAGER),
      reportingController: 'virtualization-pre-delete',
      reportingInstance: process.env['HOSTNAME'] ?? 'pre-delete',
      logger: log,
    }),
    close: () => kube.close(),
  };
}

export type Outcome = { readonly kind: 'refused'; readonly error: RemovalNotConfirmedError } | { readonly kind: 'cleaned'; readonly report: CleanupReport };

export async function confirmedCleanup(
  ports: PreDeletePorts,
  config: PreDeleteConfig,
  o: { readonly claim: string; readonly sender: string | undefined; readonly log: Logger; readonly signal?: AbortSignal | undefined },
): Promise<Outcome> {
  const name = config.MODULE_CONFIG_NAME;
  const before = await confirmRemoval(ports.moduleConfigs, name, o.signal);
  if (!before.confirmed) return { kind: 'refused', error: await refuse(before, { ...o, events: ports.events }) };
  o.log.info(
    { state: before.state, sender: o.sender },
    `ModuleConfig ${name} ${o.claim}, and the apiserver agrees (${before.state}): removing the KubeVirt and CDI configuration`,
  );
  const report = await deleteAndWait(config.RESOURCES, ports.store, { timeoutMs: config.WAIT_TIMEOUT, pollMs: config.POLL_INTERVAL, signal: o.signal });
  logReport(o.log, report);
  if (report.ok) return { kind: 'cleaned', report };
  const after = await confirmRemoval(ports.moduleConfigs, name, o.signal);
  if (!after.confirmed)
    return { kind: 'refused', error: await refuse(after, { ...o, claim: `${o.claim} (checked again after the wait)`, events: ports.events }) };
  return { kind: 'cleaned', report };
}
