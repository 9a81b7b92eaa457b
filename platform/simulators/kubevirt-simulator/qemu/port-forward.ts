/**
 * Port-forward into a real guest: its user-mode network (`-netdev user,id=net0`) gets a host forward
 * from a loopback port of this machine to the guest's TCP port (QMP `human-monitor-command`
 * `hostfwd_add`), made on first use and kept while the guest runs; a connection to that loopback port
 * reaches whatever listens on the guest's port (the guest's own address 10.0.2.15).
 */
import { freePort } from '../../../../tests/env/ports.js';
import type { QemuGuest } from './guest-process.js';

export class PortForwardError extends Error {
  readonly code = 'GUEST_PORT_FORWARD';
}

/** The loopback port forwarded to each guest port, by guest. */
const forwards = new WeakMap<QemuGuest, Map<number, Promise<number>>>();

async function addForward(guest: QemuGuest, guestPort: number): Promise<number> {
  // Free a moment ago; QEMU binds it next (a race with another binder is reported by QEMU).
  const hostPort = await freePort();
  const rule = `tcp:127.0.0.1:${hostPort}-:${guestPort}`;
  // HMP answers with text: empty when the rule was set, the complaint otherwise.
  const said = await guest.qmp((run) => run('human-monitor-command', { 'command-line': `hostfwd_add net0 ${rule}` }));
  const text = typeof said === 'string' ? said.trim() : '';
  if (text !== '') throw new PortForwardError(`port-forward to guest port ${guestPort}: QEMU refused ${rule}: ${text}`);
  return hostPort;
}

/** The loopback port of this machine that reaches TCP port `guestPort` of the running guest. */
export async function forwardGuestPort(guest: QemuGuest, guestPort: number): Promise<number> {
  if (!Number.isInteger(guestPort) || guestPort < 1 || guestPort > 65535) throw new PortForwardError(`port-forward: ${guestPort} is not a TCP port`);
  if (!guest.running) throw new PortForwardError(`port-forward to guest port ${guestPort}: the guest is not running`);
  const byPort = forwards.get(guest) ?? new Map<number, Promise<number>>();
  forwards.set(guest, byPort);
  let made = byPort.get(guestPort);
  if (made === undefined) {
    made = addForward(guest, guestPort);
    byPort.set(guestPort, made);
    // A failed attempt is not kept: the next session tries again.
    void made.catch(() => byPort.delete(guestPort));
  }
  return made;
}
