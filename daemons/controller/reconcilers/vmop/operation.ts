import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import type { Logger } from '../../../../shared/log/index.js';
import type { Deps } from '../../deps.js';

/** What an operation works with in one pass. */
export interface OpContext {
  readonly deps: Deps;
  readonly vmop: VirtualMachineOperation;
  readonly vm: VirtualMachine;
  readonly kvvm: InternalVirtualMachine | undefined;
  readonly kvvmi: InternalVirtualMachineInstance | undefined;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/** A resource an operation restores or creates, as status.resources lists it. */
export type OperationResource = NonNullable<NonNullable<VirtualMachineOperation['status']>['resources']>[number];

/** Where a running operation stands (`resources` replace status.resources when given). */
export type Progress =
  | { state: 'done'; resources?: OperationResource[] }
  | { state: 'failed'; message: string; resources?: OperationResource[] }
  | { state: 'waiting'; reason: string; progress?: string; message?: string; resources?: OperationResource[]; recheckMs?: number };

/** One operation type: send the signal once, then check until done or failed; clean up after. */
export interface Operation {
  /** Completed=False reason while it runs. */
  readonly inProgressReason: string;
  /** Send the signal; returns a message when the VM is not ready for it yet (retried later). */
  signal(c: OpContext): Promise<string | undefined>;
  check(c: OpContext): Progress | Promise<Progress>;
  /**
   * Undo markers the operation left (on completion, failure or deletion); resolves true when nothing
   * is left, false while something it removed is still going away (a cancelled migration).
   */
  cleanup(c: Pick<OpContext, 'deps' | 'vmop' | 'kvvm' | 'signal'>): Promise<boolean>;
  /**
   * True when cleanup touches only objects the operation made (its migration), so it may run again
   * after a supersede to finish a withdrawal cut short; a shared marker (an annotation a newer
   * operation may have set again) must not be withdrawn twice.
   */
  readonly cleansOwnObjectsOnly?: boolean;
}
