/**
 * Freeze and thaw of a simulated guest, as virt-handler records them: after the guest agent's
 * `guest-fsfreeze-freeze` virt-handler writes `status.fsFreezeStatus: frozen` into the instance, and
 * takes it away once thawed (by `unfreeze`, or by itself after the freeze's unfreeze timeout). A real
 * guest (`qemu/`) goes to its own agent and its status is read back from it (`real-guest.ts`).
 */
import { FS_FREEZE_STATUS_FROZEN } from '../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { ResourcePort } from '../../../../shared/kube/index.js';
import type { Logger } from '../../../../shared/log/index.js';
import type { GuestSockets } from '../virt-api/guest-stream.js';
import { find, ref } from '../context.js';
import { DEFAULT_UNFREEZE_MS } from '../qemu/backend.js';
import { ConflictError } from '../../../../shared/errors/index.js';
import { instanceWriteOps } from './write.js';

type FsFreeze = NonNullable<GuestSockets['fsFreeze']>;

/** Why a freeze or thaw cannot reach a simulated guest's agent: no running instance, or its agent is not connected. */
export class GuestAgentUnavailable extends Error {
  readonly code = 'GUEST_AGENT_UNAVAILABLE';
}

export interface SimulatedFreeze {
  readonly fsFreeze: FsFreeze;
  /** Forget every pending unfreeze timeout. */
  stop(): void;
}

/** Freeze and thaw of simulated guests, written into their instances through `kvvmis`. */
export function simulatedFreeze(kvvmis: Pick<ResourcePort<InternalVirtualMachineInstance>, 'get' | 'jsonPatch'>, log: Logger): SimulatedFreeze {
  const timers = new Map<string, NodeJS.Timeout>();
  const fsFreeze: FsFreeze = async (namespace, name, action, unfreezeMs = DEFAULT_UNFREEZE_MS) => {
    const key = `${namespace}/${name}`;
    // Written as the node agent writes every instance change (write.ts: on the version read, 409 if
    // anyone wrote since); a conflict reads the instance again.
    for (let attempt = 1; ; attempt++) {
      const vmi = await find(() => kvvmis.get(ref(namespace, name)));
      if (vmi === undefined || vmi.status?.phase !== 'Running') throw new GuestAgentUnavailable(`VMI ${key} is not running`);
      const agent = (vmi.status.conditions ?? []).some((c) => c.type === 'AgentConnected' && c.status === 'True');
      if (!agent) throw new GuestAgentUnavailable(`the guest agent of VMI ${key} is not connected`);
      try {
        await kvvmis.jsonPatch(
          ref(namespace, name),
          instanceWriteOps(vmi, { status: { fsFreezeStatus: action === 'freeze' ? FS_FREEZE_STATUS_FROZEN : null } }),
        );
        break;
      } catch (err: unknown) {
        if (!(err instanceof ConflictError) || attempt >= 5) throw err;
      }
    }
    clearTimeout(timers.get(key));
    timers.delete(key);
    log.info({ vm: key, action }, action === 'freeze' ? 'simulated guest filesystems frozen' : 'simulated guest filesystems thawed');
    if (action === 'freeze') {
      const timer = setTimeout(() => {
        timers.delete(key);
        void fsFreeze(namespace, name, 'thaw').catch((err: unknown) => log.warn({ err, vm: key }, 'the unfreeze timeout could not thaw the simulated guest'));
      }, unfreezeMs);
      timer.unref();
      timers.set(key, timer);
    }
    return 'done';
  };
  return {
    fsFreeze,
    stop: () => {
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
    },
  };
}

/**
 * The guests the virt-api stand-in reaches: a VM's real guest where it runs one, else its simulated one.
 * Every member of GuestSockets is passed on (`Required`: one added there must be added here, or the
 * stand-in would serve its imitation to a real guest, as port-forward once did in `npm start`).
 */
export function withSimulatedGuests(real: GuestSockets | undefined, simulated: SimulatedFreeze): Required<GuestSockets> {
  return {
    socketOf: (namespace, name, kind) => real?.socketOf(namespace, name, kind),
    fsFreeze: async (namespace, name, action, unfreezeMs) => {
      const answer = (await real?.fsFreeze?.(namespace, name, action, unfreezeMs)) ?? 'no-guest';
      return answer === 'done' ? 'done' : simulated.fsFreeze(namespace, name, action, unfreezeMs);
    },
    forwardPort: (namespace, name, port) => real?.forwardPort?.(namespace, name, port),
  };
}
