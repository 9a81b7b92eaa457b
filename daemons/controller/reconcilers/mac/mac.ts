/**
 * MAC addresses of VMs as the original allocates them: the first three bytes (OUI) come from the
 * cluster's UUID, the last three are random; the lease name `mac-aa-bb-cc-dd-ee-ff` is the lock.
 */
import { randomInt } from 'node:crypto';

/** Label on a lease: the uid of the VirtualMachineMACAddress holding it. */
export const VMMAC_UID_LABEL = 'virtualization.deckhouse.io/virtual-machine-mac-address-uid';

const UUID = /^[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{12}$/;

/**
 * The OUI for a cluster UUID, as the original derives it: the first byte (in hex pairs) whose low hex
 * digit is 2, 6, a or e (a locally administered unicast address) and the two after it (wrapping);
 * when there is none, the first three bytes with the second hex digit forced to 2. Undefined for a
 * string that is not a UUID.
 */
export function ouiFromClusterUuid(uuid: string): string | undefined {
  if (!UUID.test(uuid)) return undefined;
  const hex = uuid.replaceAll('-', '').toLowerCase();
  for (let i = 0; i < hex.length / 2; i++) {
    if ('26ae'.includes(hex[2 * i + 1] ?? '')) {
      const start = 2 * i;
      const oui = (hex.slice(start, start + 6) + hex).slice(0, 6);
      return pairs(oui);
    }
  }
  return pairs(`${hex[0] ?? '0'}2${hex.slice(2, 6)}`);
}

const pairs = (hex: string): string => (hex.match(/../g) ?? []).join(':');

/** `AA-BB-...` or `aa:bb:...` as `aa:bb:cc:dd:ee:ff`. */
export const normalizeMac = (mac: string): string => mac.toLowerCase().replaceAll('-', ':');

export const macToLeaseName = (mac: string): string => `mac-${normalizeMac(mac).replaceAll(':', '-')}`;

/** The MAC a lease name encodes, or undefined when the name is not a lease name. */
export function leaseNameToMac(name: string): string | undefined {
  const m = /^mac-((?:[0-9a-f]{2}-){5}[0-9a-f]{2})$/.exec(name);
  return m?.[1]?.replaceAll('-', ':');
}

/** A MAC of the OUI with three random bytes. */
export function randomMac(oui: string, pick: (n: number) => number = randomInt): string {
  const tail = Array.from({ length: 3 }, () => pick(256).toString(16).padStart(2, '0'));
  return [oui, ...tail].join(':');
}
