import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { DiskAndVolume } from './devices.js';

type VMSpec = VirtualMachine['spec'];

/** Machine type, firmware, features and OS-specific devices for osType and bootloader. */
export interface OsShape {
  machine: { type: string };
  firmware?: Record<string, unknown>;
  features: Record<string, unknown>;
  devices: Record<string, unknown>;
}

const HYPERV = {
  frequencies: { enabled: true },
  ipi: { enabled: true },
  reenlightenment: { enabled: true },
  relaxed: { enabled: true },
  reset: { enabled: true },
  runtime: { enabled: true },
  spinlocks: { enabled: true, spinlocks: 8191 },
  tlbflush: { enabled: true },
  vapic: { enabled: true },
  vpindex: { enabled: true },
};

export function osShapeOf(spec: Pick<VMSpec, 'osType' | 'bootloader'>): OsShape {
  const secureBoot = spec.bootloader === 'EFIWithSecureBoot';
  const smm = { enabled: spec.osType !== 'Legacy' || secureBoot };
  const firmware = firmwareOf(spec.bootloader);
  const base = { ...(firmware !== undefined ? { firmware } : {}) };
  switch (spec.osType) {
    case 'Windows':
      return {
        ...base,
        machine: { type: 'q35' },
        features: { acpi: {}, apic: {}, smm, hyperv: HYPERV },
        devices: { autoattachInputDevice: true, tpm: {} },
      };
    case 'Legacy':
      return {
        ...base,
        machine: { type: 'pc' },
        features: { acpi: {}, apic: {}, smm },
        devices: { autoattachInputDevice: true, useVirtioTransitional: true },
      };
    case 'Generic':
      return { ...base, machine: { type: 'q35' }, features: { acpi: {}, smm }, devices: { autoattachInputDevice: true, rng: {} } };
  }
}

function firmwareOf(bootloader: VMSpec['bootloader']): Record<string, unknown> | undefined {
  if (bootloader === 'EFI') return { bootloader: { efi: { secureBoot: false } } };
  if (bootloader === 'EFIWithSecureBoot') return { bootloader: { efi: { secureBoot: true, persistent: true } } };
  return undefined;
}

/** The cloud-init or sysprep volume and disk for spec.provisioning, if any. */
export function provisioningOf(provisioning: VMSpec['provisioning'], cdromBus: string, diskBus: string): DiskAndVolume | undefined {
  if (provisioning === undefined) return undefined;
  if (provisioning.type === 'SysprepRef' && provisioning.sysprepRef !== undefined) {
    return {
      disk: { name: 'sysprep', cdrom: { bus: cdromBus } },
      volume: { name: 'sysprep', sysprep: { secret: { name: provisioning.sysprepRef.name } } },
    };
  }
  const source =
    provisioning.type === 'UserDataRef' && provisioning.userDataRef !== undefined
      ? { secretRef: { name: provisioning.userDataRef.name } }
      : { userData: provisioning.userData ?? '' };
  return { disk: { name: 'cloudinit', disk: { bus: diskBus } }, volume: { name: 'cloudinit', cloudInitNoCloud: source } };
}
