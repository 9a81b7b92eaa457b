import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import { FS_FREEZE_STATUS_FROZEN } from '../../../../../shared/api/internal/launcher.js';
import type { Handler } from '../../../engine/reconciler.js';
import { condition, dropCondition, type VMState } from '../state.js';

const Frozen = VMCondition.FilesystemFrozen;
const Agent = VMCondition.AgentReady;

/** The original's message while the guest's filesystems are frozen. */
export const FILESYSTEM_FROZEN_MESSAGE = 'File system of the Virtual Machine is frozen.';

/**
 * FilesystemFrozen, as the original's filesystem handler: True (reason `Frozen`) while the instance
 * reports `fsFreezeStatus: frozen` and the VM's agent is ready; absent otherwise (no instance, an agent
 * that does not answer, thawed). A snapshot's freeze and thaw show here. Runs after `guest`, which
 * decides AgentReady.
 */
export function filesystemHandler(): Handler<VMState> {
  return {
    name: 'filesystem',
    handle(s, ctx): void {
      if (s.obj.metadata.deletionTimestamp !== undefined) return;
      const agentReady = s.status.conditions?.some((c) => c.type === Agent.type && c.status === 'True') === true;
      if (s.kvvmi === undefined || !agentReady || s.kvvmi.status?.fsFreezeStatus !== FS_FREEZE_STATUS_FROZEN) return dropCondition(s, Frozen.type);
      condition(s, ctx, { type: Frozen.type, status: 'True', reason: Frozen.reason.Frozen, message: FILESYSTEM_FROZEN_MESSAGE });
    },
  };
}
