import { createHash } from 'node:crypto';
import { fnv1a32 } from '../../../../../shared/api/hash.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { Disk, Volume } from './types.js';

/** A block device of the VM, resolved from its VirtualDisk / VirtualImage / ClusterVirtualImage. */
export interface ResolvedDevice {
  kind: 'VirtualDisk' | 'VirtualImage' | 'ClusterVirtualImage';
  name: string;
  uid: string;
  /** Where the data is: a PVC (`migratingFrom`: the claim a storage-class migration copies it from), or an image in DVCR. */
  source: { pvc: string; readOnly: boolean; migratingFrom?: string | undefined } | { image: string };
  cdrom: boolean;
  size?: string | undefined;
  bootOrder?: number | undefined;
}

export interface Buses {
  disk: string;
  cdrom: string;
  nic: string;
}

/** Disk, CD-ROM and NIC models for the OS type and paravirtualization. */
export function busesOf(spec: Pick<VirtualMachine['spec'], 'osType' | 'enableParavirtualization'>): Buses {
  const pv = spec.enableParavirtualization;
  if (spec.osType === 'Legacy') return pv ? { disk: 'virtio', cdrom: 'ide', nic: 'virtio' } : { disk: 'ide', cdrom: 'ide', nic: 'rtl8139' };
  return pv ? { disk: 'scsi', cdrom: 'scsi', nic: 'virtio' } : { disk: 'sata', cdrom: 'sata', nic: 'e1000' };
}

const PREFIX: Record<ResolvedDevice['kind'], { prefix: string; max: number }> = {
  VirtualDisk: { prefix: 'vd-', max: 60 },
  VirtualImage: { prefix: 'vi-', max: 49 },
  ClusterVirtualImage: { prefix: 'cvi-', max: 48 },
};

const VOLUME_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The disk/volume name of a device: `vd-<name>`, shortened with a hash when too long or not a DNS label. */
export function volumeNameOf(kind: ResolvedDevice['kind'], name: string): string {
  const { prefix, max } = PREFIX[kind];
  const full = `${prefix}${name}`;
  if (full.length <= max && VOLUME_NAME.test(full)) return full;
  const hash = fnv1a32(name).toString(16).padStart(8, '0');
  const head = name
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, max - prefix.length - hash.length - 1)
    .replace(/-+$/, '');
  return `${prefix}${head}-${hash}`;
}

/** The disk serial: md5 of the device's UID, hex. */
export function serialOf(uid: string): string {
  return createHash('md5').update(uid).digest('hex');
}

/** Boot orders: the explicit ones when any ref sets one, else the list position (1-based). */
export function bootOrders(refs: readonly { bootOrder?: number | undefined }[]): (number | undefined)[] {
  const explicit = refs.some((r) => r.bootOrder !== undefined);
  return refs.map((r, i) => (explicit ? r.bootOrder : i + 1));
}

export interface DiskAndVolume {
  disk: Disk;
  volume: Volume;
}

/** The KubeVirt disk and volume of one device. */
export function diskAndVolume(device: ResolvedDevice, buses: Buses, bootOrder: number | undefined): DiskAndVolume {
  const name = volumeNameOf(device.kind, device.name);
  const disk: Disk = {
    name,
    serial: serialOf(device.uid),
    errorPolicy: 'report',
    ...(bootOrder !== undefined ? { bootOrder } : {}),
    ...(device.cdrom ? { cdrom: { bus: buses.cdrom } } : { disk: { bus: buses.disk } }),
  };
  const volume: Volume =
    'pvc' in device.source
      ? { name, persistentVolumeClaim: { claimName: device.source.pvc, ...(device.source.readOnly ? { readOnly: true } : {}) } }
      : { name, containerDisk: { image: device.source.image } };
  return { disk, volume };
}

/** The interface name of an additional network, as the original derives it from the MAC: `veth_n`/`veth_cn` + 8 hex of md5(mac). */
export function interfaceNameOf(mac: string, type: 'Network' | 'ClusterNetwork'): string {
  const hash = createHash('md5').update(mac).digest('hex').slice(0, 8);
  return `${type === 'Network' ? 'veth_n' : 'veth_cn'}${hash}`;
}

interface NetworkRef {
  type: 'Main' | 'Network' | 'ClusterNetwork';
  name?: string | undefined;
}

/**
 * The KubeVirt interface and network of each additional network with a MAC address (in spec order):
 * a bridge interface carrying the address, on the multus network of that name. Networks without an
 * address are left out, as the original leaves them out until its pool assigns one.
 */
export function additionalNetworks(
  networks: readonly NetworkRef[],
  macs: ReadonlyMap<number, string> | undefined,
  model: string,
): { iface: { name: string; model: string; bridge: Record<string, never>; macAddress: string }; network: { name: string; multus: { networkName: string } } }[] {
  return networks.flatMap((n, i) => {
    const mac = macs?.get(i);
    if (n.type === 'Main' || mac === undefined) return [];
    const name = interfaceNameOf(mac, n.type);
    return [{ iface: { name, model, bridge: {}, macAddress: mac }, network: { name, multus: { networkName: n.name ?? '' } } }];
  });
}
