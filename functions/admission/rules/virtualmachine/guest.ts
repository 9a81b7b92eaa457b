/** Warnings about the guest: Legacy OS with paravirtualization, and inline cloud-init user data. */
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { pure, type Check } from '../check.js';

const CLOUD_INIT_HEADERS = ['#cloud-config', '#!', '#include', '#cloud-boothook', '#part-handler', '## template: jinja', 'Content-Type:'];

export const legacyParavirtualization: Check<VirtualMachine> = pure('a Legacy guest is warned about virtio', ({ object }, out) => {
  if (object.spec.osType === 'Legacy' && object.spec.enableParavirtualization) {
    out.warn('osType Legacy with enableParavirtualization=true needs virtio drivers in the guest', 'spec.enableParavirtualization');
  }
});

/** Problems cloud-init would have with inline user data (warnings: the guest may still cope). */
export function cloudInitLint(userData: string): string[] {
  const text = userData.trimStart();
  if (text === '') return ['is empty'];
  if (!CLOUD_INIT_HEADERS.some((h) => text.startsWith(h))) {
    return ['does not start with #cloud-config (or another cloud-init header); cloud-init may ignore it'];
  }
  if (text.startsWith('#cloud-config') && /^\t/m.test(text)) return ['YAML does not allow tabs for indentation'];
  return [];
}

export const cloudInitUserData: Check<VirtualMachine> = pure('inline cloud-init user data looks usable', ({ object }, out) => {
  const p = object.spec.provisioning;
  if (p?.type !== 'UserData' || p.userData === undefined) return;
  for (const problem of cloudInitLint(p.userData)) out.warn(problem, 'spec.provisioning.userData');
});
