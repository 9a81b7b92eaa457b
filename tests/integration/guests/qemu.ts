import { findQemu } from '../../../platform/simulators/kubevirt-simulator/qemu/backend.js';

/**
 * The QEMU binary the guest tests run. `npm test` installs it (tests/env/install-deps.sh, Debian
 * qemu-system-x86), so a machine without it is a broken set-up: the tests fail saying so, not skip.
 */
export async function requireQemu(): Promise<string> {
  const qemu = await findQemu();
  if (qemu === undefined) {
    throw new Error('qemu-system-x86_64 is not installed: run tests/env/install-deps.sh (it installs Debian qemu-system-x86)');
  }
  return qemu;
}
