/**
 * CDI spec files (Container Device Interface, spec 1.0.0) in the dynamic CDI dir: a common file with
 * the node and driver names, and one transient file per prepared claim with one CDI device per USB
 * device (its device node and the original's DRA_USB_* environment). Files are JSON (valid YAML too),
 * written atomically so a container runtime never reads half a spec.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { removeFileDurable, writeFileAtomic } from '../state/atomic-file.js';

export const CDI_VENDOR = 'dra.virtualization.deckhouse.io';
export const CDI_CLASS = 'usb';
export const CDI_KIND = `${CDI_VENDOR}/${CDI_CLASS}`;
export const CDI_VERSION = '1.0.0';
export const COMMON_DEVICE = 'common';

export interface CdiUsbDevice {
  deviceName: string;
  devicePath: string;
  usbAddress: string;
  major?: number | undefined;
  minor?: number | undefined;
}

export interface CdiSpec {
  cdiVersion: string;
  kind: string;
  devices: { name: string; containerEdits: ContainerEdits }[];
}

interface ContainerEdits {
  env?: string[];
  deviceNodes?: {
    path: string;
    hostPath: string;
    type: 'c';
    major?: number;
    minor?: number;
    permissions: string;
    uid?: number;
    gid?: number;
  }[];
}

/** `dra.virtualization.deckhouse.io/usb=<name>` */
export function cdiDeviceId(name: string): string {
  return `${CDI_KIND}=${name}`;
}

export function claimDeviceName(claimUid: string, deviceName: string): string {
  return `${claimUid}-${deviceName}`;
}

/** `dra.virtualization.deckhouse.io-usb_<id>.json` */
export function specFileName(id: string): string {
  return `${CDI_VENDOR}-${CDI_CLASS}_${id}.json`;
}

export function commonSpec(nodeName: string, driver: string): CdiSpec {
  return {
    cdiVersion: CDI_VERSION,
    kind: CDI_KIND,
    devices: [{ name: COMMON_DEVICE, containerEdits: { env: [`KUBERNETES_NODE_NAME=${nodeName}`, `DRA_RESOURCE_DRIVER_NAME=${driver}`] } }],
  };
}

/** The spec of one claim: a CDI device per USB device, owner uid/gid on the device node when given. */
export function claimSpec(claimUid: string, devices: readonly CdiUsbDevice[], owner: { uid?: number | undefined; gid?: number | undefined } = {}): CdiSpec {
  const uidUpper = claimUid.toUpperCase();
  return {
    cdiVersion: CDI_VERSION,
    kind: CDI_KIND,
    devices: devices.map((d) => {
      const nameUpper = d.deviceName.toUpperCase();
      return {
        name: claimDeviceName(claimUid, d.deviceName),
        containerEdits: {
          env: [
            `DRA_USB_${d.deviceName.replace(/^usb-/, '')}_RESOURCE_CLAIM=${claimUid}`,
            `DRA_USB_CLAIM_UID_${uidUpper}=${claimUid}`,
            `DRA_USB_DEVICE_NAME_${nameUpper}=${d.deviceName}`,
            `DRA_USB_CLAIM_UID_${uidUpper}_DEVICE_NAME=${d.deviceName}`,
            `DRA_USB_${nameUpper}_DEVICE_PATH=${d.devicePath}`,
            `DRA_USB_${nameUpper}_BUS_DEVICENUMBER=${d.usbAddress}`,
          ],
          deviceNodes: [
            {
              path: d.devicePath,
              hostPath: d.devicePath,
              type: 'c',
              ...(d.major !== undefined ? { major: d.major } : {}),
              ...(d.minor !== undefined ? { minor: d.minor } : {}),
              permissions: 'rwm',
              ...(owner.uid !== undefined ? { uid: owner.uid } : {}),
              ...(owner.gid !== undefined ? { gid: owner.gid } : {}),
            },
          ],
        },
      };
    }),
  };
}

/** Writes and removes the spec files of one CDI dir. */
export class CdiDir {
  constructor(readonly root: string) {}

  pathOf(id: string): string {
    return join(this.root, specFileName(id));
  }

  async write(id: string, spec: CdiSpec): Promise<void> {
    await writeFileAtomic(this.pathOf(id), `${JSON.stringify(spec, null, 2)}\n`, { mode: 0o644 });
  }

  /** Whether the spec file of `id` is there (any error but "absent" is thrown). */
  async has(id: string): Promise<boolean> {
    try {
      await access(this.pathOf(id));
      return true;
    } catch (err: unknown) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  async remove(id: string): Promise<void> {
    await removeFileDurable(this.pathOf(id));
  }
}
