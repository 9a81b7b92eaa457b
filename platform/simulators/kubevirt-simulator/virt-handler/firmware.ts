/**
 * The guest firmware's search for something to boot, as SeaBIOS/OVMF do it on the VM's disks: a disk
 * or CD-ROM from an image (a containerDisk) boots; a disk on a PersistentVolume boots when the volume
 * holds a disk image whose first sector is not blank (a blank VirtualDisk has no image, or only zeros);
 * provisioning data (cloud-init, sysprep) never boots. Where the simulator cannot look (no claim, no
 * readable hostPath volume), the disk counts as bootable: nothing says otherwise.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { ResourceClient } from '../../../../shared/kube/index.js';
import type { PV, PVC } from '../../storage-simulator/kube.js';
import { find } from '../context.js';

/** The file a filled volume holds (the importer's destination, CDI's layout). */
export const DISK_IMAGE = 'disk.img';
const SECTOR = 512;
const PROVISIONING_VOLUMES = ['cloudInitNoCloud', 'cloudInitConfigDrive', 'sysprep'];

/** Reads the first sector of a volume directory's disk image; undefined when there is no image. */
export interface DiskReader {
  firstSector(volumeDir: string): Promise<Buffer | undefined>;
}

/** The real reader: `<dir>/disk.img` on this machine (the storage simulator's hostPath volumes). */
export const fileDiskReader: DiskReader = {
  async firstSector(volumeDir) {
    let file;
    try {
      file = await open(join(volumeDir, DISK_IMAGE), 'r');
    } catch (err: unknown) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const buf = Buffer.alloc(SECTOR);
      const { bytesRead } = await file.read(buf, 0, SECTOR, 0);
      return buf.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  },
};

export interface VolumeLookup {
  pvcs: Pick<ResourceClient<PVC>, 'get'>;
  pvs: Pick<ResourceClient<PV>, 'get'>;
  reader: DiskReader;
}

export type Volume = NonNullable<InternalVirtualMachineInstance['spec']['volumes']>[number];

/** Whether the guest's firmware finds a device to boot from. */
export async function findsBootableDevice(vmi: InternalVirtualMachineInstance, look: VolumeLookup): Promise<boolean> {
  const volumes = new Map((vmi.spec.volumes ?? []).map((v) => [v.name, v]));
  const disks = (vmi.spec.domain.devices?.['disks'] ?? []) as { name: string }[];
  for (const d of disks) {
    const volume = volumes.get(d.name);
    if (volume === undefined || PROVISIONING_VOLUMES.some((k) => k in volume)) continue;
    if (await volumeBoots(vmi.metadata.namespace ?? '', volume, look)) return true;
  }
  return false;
}

/**
 * The directory of this machine that holds a PVC volume's files (the storage simulator's hostPath
 * volume); undefined for a volume that is not a claim, or whose claim or volume cannot be found.
 */
export async function volumeDir(namespace: string, volume: Volume, look: Pick<VolumeLookup, 'pvcs' | 'pvs'>): Promise<string | undefined> {
  return (await volumeOnDisk(namespace, volume, look))?.dir;
}

/** The directory of a PVC volume's PersistentVolume on this machine and the volume's capacity (a quantity), if bound to a hostPath volume. */
export async function volumeOnDisk(
  namespace: string,
  volume: Volume,
  look: Pick<VolumeLookup, 'pvcs' | 'pvs'>,
): Promise<{ dir: string; capacity: string | undefined } | undefined> {
  const claim = (volume['persistentVolumeClaim'] as { claimName?: string } | undefined)?.claimName;
  if (claim === undefined) return undefined;
  const pvName = (await find(() => look.pvcs.get({ namespace, name: claim })))?.spec.volumeName;
  if (pvName === undefined || pvName === '') return undefined;
  const pv = await find(() => look.pvs.get({ name: pvName }));
  const dir = pv?.spec.hostPath?.path;
  return dir === undefined ? undefined : { dir, capacity: pv?.spec.capacity?.['storage'] };
}

async function volumeBoots(namespace: string, volume: Volume, look: VolumeLookup): Promise<boolean> {
  const dir = await volumeDir(namespace, volume, look);
  if (dir === undefined) return true;
  let sector: Buffer | undefined;
  try {
    sector = await look.reader.firstSector(dir);
  } catch {
    return true;
  }
  return sector !== undefined && sector.some((b) => b !== 0);
}
