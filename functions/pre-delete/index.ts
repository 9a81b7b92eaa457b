/**
 * The pre-delete function: when the `virtualization` ModuleConfig is deleted or disabled, and the
 * apiserver confirms it, delete the internal KubeVirt and CDI configuration objects and wait until
 * they are gone. Answers 204 when done (or when the event is not about that), 409 when the apiserver
 * contradicts the event (nothing deleted, a Warning Event on the ModuleConfig), 504/502 when the
 * deadline passed or a call failed, so that the Trigger redelivers. Only senders allowed to create
 * `predeleteevents.virtualization.deckhouse.io` are heard (shared/authz/senders.ts). The same
 * clean-up runs as a one-shot Job from job.ts. See README.md.
 */
import { PRE_DELETE_SENDER, UNCHECKED_SENDER, senderGuardFromEnv, type SenderGuard } from '../../shared/authz/index.js';
import { defineFunction, runIfMain } from '../../shared/runtime/index.js';
import { confirmedCleanup, kubePorts, type PreDeletePorts } from './act.js';
import { preDeleteConfig } from './config.js';
import { decide } from './event.js';
import { CleanupIncompleteError } from './report.js';

export interface PreDeleteState {
  readonly ports: PreDeletePorts;
  /** Who may send events; undefined with SENDER_AUTH=none. */
  readonly senders: SenderGuard | undefined;
}

export const preDelete = defineFunction({
  name: 'pre-delete',
  config: preDeleteConfig,
  init: ({ config, log, metrics }): PreDeleteState => ({
    ports: kubePorts(config.KUBECONFIG, log),
    senders: senderGuardFromEnv(config, { attributes: PRE_DELETE_SENDER, what: 'start the pre-delete clean-up', env: process.env, metrics, log }),
  }),
  senders: (request, { state }) => state.senders?.verdict(request) ?? UNCHECKED_SENDER,
  handle: async (event, ctx) => {
    const { config, state, log } = ctx;
    const decision = decide(event, config.MODULE_CONFIG_NAME);
    if (!decision.act) {
      log.debug({ type: event.type, why: decision.why }, 'event ignored');
      return;
    }
    const outcome = await confirmedCleanup(state.ports, config, { claim: decision.why, sender: ctx.sender, log, signal: ctx.signal });
    if (outcome.kind === 'refused') throw outcome.error;
    if (!outcome.report.ok) throw new CleanupIncompleteError(outcome.report);
  },
  readiness: () => true,
  shutdown: ({ state }) => {
    state.senders?.close();
    state.ports.close();
  },
});

runIfMain(import.meta.url, preDelete);
