import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { Handler } from '../../../engine/reconciler.js';
import { condition, dropCondition, type VMState } from '../state.js';

const Eviction = VMCondition.EvictionRequired;

/** The original's message while the instance is marked for evacuation. */
export const EVICTION_REQUIRED_MESSAGE = 'VirtualMachine should be evicted from current node or restarted.';

/**
 * EvictionRequired, as the original's evict handler: True while the instance carries
 * `status.evacuationNodeName` (KubeVirt's eviction interceptor set it when a launcher pod was evicted,
 * e.g. by a node drain), absent otherwise. The evacuation reconciler acts on it (reconcilers/evacuation).
 */
export function evictHandler(): Handler<VMState> {
  return {
    name: 'evict',
    handle(s, ctx): void {
      const node = s.kvvmi?.status?.evacuationNodeName;
      if (node === undefined || node === '') return dropCondition(s, Eviction.type);
      condition(s, ctx, { type: Eviction.type, status: 'True', reason: Eviction.reason.EvictionRequired, message: EVICTION_REQUIRED_MESSAGE });
    },
  };
}
