import type { Deps } from '../../../deps.js';
import type { Expectations } from '../../../engine/expectations.js';
import type { Handler } from '../../../engine/reconciler.js';
import type { VMState } from '../state.js';
import { ignoreMissing } from './deletion.js';

/**
 * Executes the power decision the way KubeVirt expects it: a start or a restart is a state change
 * request in the internal VM's status (restart = stop this instance uid, then start); a stop deletes
 * the instance.
 */
export function powerStateHandler(deps: Deps, restarts: Expectations<string>): Handler<VMState> {
  return {
    name: 'powerState',
    async handle(s, ctx): Promise<void> {
      const { kvvm, kvvmi, power } = s;
      if (power.kind === 'none' || kvvm === undefined) return;
      const ref = { namespace: kvvm.metadata.namespace, name: kvvm.metadata.name ?? '' };
      const opts = { signal: ctx.signal };
      switch (power.kind) {
        case 'start':
          s.kvvm = deps.caches.kvvms.remember(await deps.clients.kvvms.patchStatus(ref, { stateChangeRequests: [{ action: 'Start' }] }, opts));
          break;
        case 'stop':
          if (kvvmi !== undefined) await ignoreMissing(deps.clients.kvvmis.delete(ref, opts));
          break;
        case 'restart': {
          const uid = kvvmi?.metadata.uid;
          const requests = uid === undefined ? [{ action: 'Start' }] : [{ action: 'Stop', uid }, { action: 'Start' }];
          s.kvvm = deps.caches.kvvms.remember(await deps.clients.kvvms.patchStatus(ref, { stateChangeRequests: requests }, opts));
          if (uid !== undefined) restarts.set(s.key, uid);
          break;
        }
      }
      ctx.log.info({ action: power.kind, why: power.why }, 'power action');
    },
  };
}
