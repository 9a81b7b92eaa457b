/**
 * The DRA daemon's node-local state directory (STATE_DIR, default /var/run/virtualization-dra, a
 * tmpfs on a node as the original's). Everything in it describes something that a node reboot wipes
 * too: the CDI specs in /var/run/cdi and the vhci attachments. So the state never outlives what it
 * describes, and a reboot leaves neither, where a checkpoint on disk would answer "already prepared"
 * for a claim whose spec is gone. A daemon restart keeps both (the hostPath outlives the pod).
 */
import { join } from 'node:path';

export interface StateLayout {
  /** The prepared claims (plugin/checkpoint.ts). */
  readonly checkpoint: string;
  /** The USB/IP import side's attachments (usbip/records.ts); `usb/` as the original's. */
  readonly usbipAttachments: string;
}

export function stateLayout(stateDir: string): StateLayout {
  return {
    checkpoint: join(stateDir, 'checkpoint.json'),
    usbipAttachments: join(stateDir, 'usb', 'attach-record.json'),
  };
}
