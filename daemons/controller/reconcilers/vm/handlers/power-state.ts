import type { InternalVirtualMachine } from '../../../../../shared/api/internal/resources.js';
import { conditionalMergePatch } from '../../../../../shared/kube/index.js';
import type { Deps } from '../../../deps.js';
import type { Expectations } from '../../../engine/expectations.js';
import type { Handler } from '../../../engine/reconciler.js';
import type { VMState } from '../state.js';
import { ignoreMissing } from './deletion.js';

/**
 * Executes the power decision the way KubeVirt expects it: a start or a restart is a state change
 * request in the internal VM's status (restart = stop this instance uid, then start); a stop deletes
 * the instance. The request is conditional on the internal VM version the decision was made on, so
 * a decision on a stale copy (requests KubeVirt has not consumed yet, an operation's newer marker)
 * is refused with a conflict and made again, never sent twice.
 */
export function powerStateHandler(deps: Deps, restarts: Expectations<string>): Handler<VMState> {
  return {
    name: 'powerState',
    async handle(s, ctx): Promise<void> {
      const { kvvm, kvvmi, power } = s;
      if (power.kind === 'none' || kvvm === undefined) return;
      const ref = { namespace: kvvm.metadata.namespace, name: kvvm.metadata.name ?? '' };
      const opts = { signal: ctx.signal };
      const request = (stateChangeRequests: unknown[]): Promise<InternalVirtualMachine> =>
        deps.clients.kvvms.mergePatch(ref, conditionalMergePatch({ status: { stateChangeRequests } }, kvvm.metadata.resourceVersion), {
          ...opts,
          subresource: 'status',
        });
      switch (power.kind) {
        case 'start':
          s.kvvm = deps.caches.kvvms.remember(await request([{ action: 'Start' }]));
          break;
        case 'stop':
          if (kvvmi !== undefined) await ignoreMissing(deps.clients.kvvmis.delete(ref, opts));
          break;
        case 'restart': {
          const uid = kvvmi?.metadata.uid;
          const requests = uid === undefined ? [{ action: 'Start' }] : [{ action: 'Stop', uid }, { action: 'Start' }];
          s.kvvm = deps.caches.kvvms.remember(await request(requests));
          if (uid !== undefined) restarts.set(s.key, uid);
          break;
        }
      }
      ctx.log.info({ action: power.kind, why: power.why }, 'power action');
    },
  };
}
