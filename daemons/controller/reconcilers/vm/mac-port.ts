/** The VM reconciler's view of VirtualMachineMACAddresses: the MAC reconcilers' cache and client. */
import { AlreadyExistsError } from '../../../../shared/errors/index.js';
import { objectKey } from '../../../../shared/kube/index.js';
import { VMMAC_BY_VM_UID, type MacParts } from '../mac/parts.js';
import { ignoreMissing } from './handlers/deletion.js';
import type { MacPort } from './handlers/mac.js';
import { madeFor } from './handlers/mac-owned.js';

export function macPort(parts: MacParts): MacPort {
  return {
    get: (namespace, name) => parts.vmmacs.get(objectKey({ namespace, name })),
    ownedBy: (vm) => parts.vmmacs.byIndex(VMMAC_BY_VM_UID, `${vm.metadata.namespace ?? ''}/${vm.metadata.uid ?? ''}`).filter((m) => madeFor(m, vm)),
    async create(vmmac, signal): Promise<boolean> {
      try {
        parts.vmmacs.remember(await parts.vmmacClient.create(vmmac, { signal }));
        return true;
      } catch (err: unknown) {
        if (err instanceof AlreadyExistsError) return false;
        throw err;
      }
    },
    async delete(namespace, name, signal): Promise<void> {
      await ignoreMissing(parts.vmmacClient.delete({ namespace, name }, { signal }));
    },
  };
}
