import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { NotFoundError } from '../../../../shared/errors/index.js';
import type { PV, PVC } from '../../storage-simulator/kube.js';
import { fileDiskReader, findsBootableDevice, type VolumeLookup } from './firmware.js';
import { guestConditions } from './guest.js';

const vmi = (volumes: Record<string, unknown>[]): InternalVirtualMachineInstance =>
  ({
    metadata: { name: 'web', namespace: 'ns' },
    spec: { domain: { devices: { disks: volumes.map((v) => ({ name: v['name'] })) } }, volumes },
  }) as unknown as InternalVirtualMachineInstance;
const pvc = (claimName: string) => ({ name: claimName, persistentVolumeClaim: { claimName } });

// Volume directories as the storage simulator keeps them: filled (a boot sector), blank (no image), zeroed.
const root = mkdtempSync(join(tmpdir(), 'firmware-'));
const made = { filled: mkdtempSync(join(root, 'filled-')), blank: mkdtempSync(join(root, 'blank-')), zeroed: mkdtempSync(join(root, 'zeroed-')) };
const sector = Buffer.alloc(512);
sector[510] = 0x55;
sector[511] = 0xaa;
writeFileSync(join(made.filled, 'disk.img'), sector);
writeFileSync(join(made.zeroed, 'disk.img'), Buffer.alloc(4096));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const notFound = (what: string): Promise<never> => Promise.reject(new NotFoundError(what));
const look: VolumeLookup = {
  pvcs: { get: ({ name }) => (name in made ? Promise.resolve({ metadata: { name }, spec: { volumeName: `pv-${name}` } } as PVC) : notFound(name)) },
  pvs: {
    get: ({ name }) => {
      const key = name.replace(/^pv-/, '') as keyof typeof made;
      return key in made ? Promise.resolve({ metadata: { name }, spec: { hostPath: { path: made[key] } } } as PV) : notFound(name);
    },
  },
  reader: fileDiskReader,
};

describe('the simulated guest firmware', () => {
  it('boots from an image, and from a volume whose disk image has a boot sector', async () => {
    expect(await findsBootableDevice(vmi([{ name: 'img', containerDisk: { image: 'dvcr/x:1' } }]), look)).toBe(true);
    expect(await findsBootableDevice(vmi([pvc('filled')]), look)).toBe(true);
  });

  it('finds no bootable device on a blank disk, a zeroed one, or only provisioning data', async () => {
    expect(await findsBootableDevice(vmi([pvc('blank')]), look)).toBe(false);
    expect(await findsBootableDevice(vmi([pvc('zeroed')]), look)).toBe(false);
    expect(await findsBootableDevice(vmi([pvc('blank'), { name: 'cloudinit', cloudInitNoCloud: { userData: '#cloud-config' } }]), look)).toBe(false);
    expect(await findsBootableDevice(vmi([]), look)).toBe(false);
  });

  it('counts a disk it cannot look into (no claim, unreadable volume) as bootable', async () => {
    expect(await findsBootableDevice(vmi([pvc('missing')]), look)).toBe(true);
    const broken: VolumeLookup = { ...look, reader: { firstSector: () => Promise.reject(new Error('EACCES')) } };
    expect(await findsBootableDevice(vmi([pvc('blank')]), broken)).toBe(true);
  });

  it('reports an agent only for a guest that booted, and NoBootableDevice for one that did not', () => {
    expect(guestConditions(true).map((c) => c.type)).toEqual(['AgentConnected', 'LiveMigratable']);
    expect(guestConditions(false)).toEqual([
      { type: 'LiveMigratable', status: 'True' },
      { type: 'GuestBootable', status: 'False', reason: 'NoBootableDevice', message: 'No bootable device.' },
    ]);
  });
});
