/** The VirtualMachine validator, and the subset that also checks the VM template of a pool. */
import { GROUP } from '../../../../shared/api/resources/common.js';
import { VirtualMachineSchema, type VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { Check } from '../check.js';
import { nameAtMost, reservedMetadataKeys } from '../metadata.js';
import { schemaParser, type Validator } from '../validator.js';
import { blockDeviceLimit, hotplugNeedsParavirtualization, imageFirstIsCdrom, notAttachedTwice, uniqueBlockDevices } from './block-devices.js';
import { autoCoreFraction, coreTopology, sizingPolicy } from './cpu.js';
import { gpus, usbDevices } from './devices.js';
import { cloudInitUserData, legacyParavirtualization } from './guest.js';
import { ipAddressName, networkIdsStable, networkShape, networksAvailable } from './networks.js';
import { placement } from './placement.js';

/** Checks of the VM spec alone: what a pool's VM template must pass too (no IPAM, limits or attachments). */
export const templateChecks: readonly Check<VirtualMachine>[] = [
  uniqueBlockDevices,
  imageFirstIsCdrom,
  coreTopology,
  sizingPolicy,
  autoCoreFraction,
  networkShape,
  networksAvailable,
  placement,
  usbDevices,
  gpus,
  legacyParavirtualization,
  cloudInitUserData,
];

export const virtualMachineValidator: Validator<VirtualMachine> = {
  group: GROUP,
  kind: 'VirtualMachine',
  parse: schemaParser(VirtualMachineSchema),
  checks: [
    nameAtMost(63),
    reservedMetadataKeys(),
    ...templateChecks,
    blockDeviceLimit,
    notAttachedTwice,
    hotplugNeedsParavirtualization,
    networkIdsStable,
    ipAddressName,
  ],
};
