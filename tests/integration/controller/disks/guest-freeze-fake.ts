/**
 * FAKE guest filesystem freeze (test support): the subresource API and a guest agent do not run in
 * these tests. It records every freeze and thaw and which VMs are frozen now, so a test can tell
 * whether a snapshot was taken while its VM was frozen.
 */
import type { GuestFilesystems } from '../../../../daemons/controller/reconcilers/snapshot/freeze.js';

export interface FreezeCall {
  op: 'freeze' | 'unfreeze';
  namespace: string;
  vm: string;
}

export class GuestFreezeFake implements GuestFilesystems {
  readonly calls: FreezeCall[] = [];
  private readonly frozen = new Set<string>();

  isFrozen(namespace: string, vm: string): boolean {
    return this.frozen.has(`${namespace}/${vm}`);
  }

  freeze(namespace: string, vm: string): Promise<void> {
    this.calls.push({ op: 'freeze', namespace, vm });
    this.frozen.add(`${namespace}/${vm}`);
    return Promise.resolve();
  }

  unfreeze(namespace: string, vm: string): Promise<void> {
    this.calls.push({ op: 'unfreeze', namespace, vm });
    this.frozen.delete(`${namespace}/${vm}`);
    return Promise.resolve();
  }

  /** The calls for one VM, as `op` strings in order. */
  of(vm: string): string[] {
    return this.calls.filter((c) => c.vm === vm).map((c) => c.op);
  }
}
