/**
 * Which operation may take the place of an unfinished older one on the same VM, as the original rules:
 * a Stop replaces a Start; a forced Stop or Restart replaces a graceful Stop or Restart; a Stop or a
 * Restart replaces a Migrate or an Evict. Admission lets such a newer operation in, and the
 * controller marks the older one Superseded and withdraws what it asked for.
 */
import type { VirtualMachineOperation } from './resources/vmop.js';

type Spec = Pick<VirtualMachineOperation['spec'], 'type' | 'force'>;

const stopOrRestart = (t: string): boolean => t === 'Stop' || t === 'Restart';

/** Whether `incoming` may replace the unfinished `existing` operation of the same VM. */
export function supersedes(existing: Spec, incoming: Spec): boolean {
  if (existing.type === 'Start') return incoming.type === 'Stop';
  if (stopOrRestart(existing.type) && existing.force !== true) return stopOrRestart(incoming.type) && incoming.force === true;
  if (existing.type === 'Migrate' || existing.type === 'Evict') return stopOrRestart(incoming.type);
  return false;
}
