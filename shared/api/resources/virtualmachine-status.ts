/** VirtualMachine status, written by the controller through /status. */
import { z } from 'zod';
import { dateTime, freeform, int32, quantity } from '../k8s/schema.js';
import { conditions, observedGeneration } from './common.js';
import { BlockDeviceKind, NetworkType } from './virtualmachine-spec.js';

export const VirtualMachinePhase = z
  .enum(['Pending', 'Running', 'Degraded', 'Terminating', 'Stopped', 'Stopping', 'Starting', 'Migrating', 'Pause'])
  .describe('Current phase of the virtual machine.');

const nodePod = z.strictObject({
  node: z.string().optional().describe('Node name.'),
  pod: z.string().optional().describe('Pod name.'),
});

const MigrationStateSchema = z
  .strictObject({
    startTimestamp: dateTime().optional().describe('When the migration started.'),
    endTimestamp: dateTime().optional().describe('When the migration ended.'),
    source: nodePod.optional().describe('Where the VM migrated from.'),
    target: nodePod.optional().describe('Where the VM migrated to.'),
    result: z.enum(['', 'Succeeded', 'Failed']).optional().describe('Result of the last migration.'),
  })
  .describe('State of the last live migration.');

const StatsSchema = z
  .strictObject({
    phasesTransitions: z
      .array(z.strictObject({ phase: VirtualMachinePhase, timestamp: dateTime().describe('When the phase was entered.') }))
      .optional()
      .describe('Recent phase changes.'),
    launchTimeDuration: z
      .strictObject({
        waitingForDependencies: z.string().optional().describe('Time spent waiting for disks, images and the class.'),
        virtualMachineStarting: z.string().optional().describe('Time from start to the Running phase.'),
        guestOSAgentStarting: z.string().optional().describe('Time from Running until the guest agent answered.'),
      })
      .optional()
      .describe('Durations of the last start.'),
    lastStartTime: dateTime().optional().describe('When the VM was last started.'),
  })
  .describe('Phase history and start-up timings.');

const ResourcesSchema = z
  .strictObject({
    cpu: z
      .strictObject({
        cores: int32().optional().describe('Cores in use.'),
        coreFraction: z.string().optional().describe('Core fraction in use.'),
        requestedCores: quantity().optional().describe('CPU requested from the node.'),
        runtimeOverhead: quantity().optional().describe('CPU used by the hypervisor on top of the guest.'),
        topology: z
          .strictObject({
            coresPerSocket: int32().optional().describe('Cores per socket.'),
            sockets: int32().optional().describe('Sockets.'),
          })
          .optional()
          .describe('CPU topology presented to the guest.'),
      })
      .optional()
      .describe('CPU in use.'),
    memory: z
      .strictObject({
        size: quantity().optional().describe('Memory in use.'),
        runtimeOverhead: quantity().optional().describe('Memory used by the hypervisor on top of the guest.'),
      })
      .optional()
      .describe('Memory in use.'),
  })
  .describe('Resources the running VM actually uses.');

export const VirtualMachineStatusSchema = z
  .strictObject({
    phase: VirtualMachinePhase.optional(),
    nodeName: z.string().optional().describe('Node the VM runs on.'),
    virtualMachineIPAddressName: z.string().optional().describe('VirtualMachineIPAddress bound to the VM.'),
    ipAddress: z.string().optional().describe('IP address of the main network interface.'),
    blockDeviceRefs: z
      .array(
        z.strictObject({
          kind: BlockDeviceKind.describe('Kind of the block device.'),
          name: z.string().describe('Name of the block device.'),
          target: z.string().optional().describe('Device name inside the VM.'),
          size: z.string().optional().describe('Size of the block device.'),
          attached: z.boolean().describe('Whether the device is attached to the VM.'),
          hotplugged: z.boolean().optional().describe('Whether the device was attached while the VM ran.'),
          virtualMachineBlockDeviceAttachmentName: z.string().optional().describe('Attachment that added the device.'),
          bootOrder: int32().optional().describe('Boot order in effect.'),
        }),
      )
      .optional()
      .describe('Block devices of the VM and their attachment state.'),
    migrationState: MigrationStateSchema.optional(),
    stats: StatsSchema.optional(),
    guestOSInfo: freeform().optional().describe('Guest OS details reported by the guest agent.'),
    conditions: conditions(),
    restartAwaitingChanges: z
      .array(freeform())
      .optional()
      .describe('Spec changes that take effect after a restart: operation, path, currentValue, desiredValue.'),
    recommendedResources: z
      .strictObject({
        cpu: z
          .strictObject({ coreFraction: z.string().optional().describe('Recommended core fraction.') })
          .optional()
          .describe('CPU recommendation.'),
      })
      .optional()
      .describe('Resources recommended from observed usage.'),
    virtualMachinePods: z
      .array(
        z.strictObject({
          name: z.string().describe('Pod name.'),
          active: z.boolean().describe('Whether this pod runs the VM now.'),
        }),
      )
      .optional()
      .describe('Pods that run or ran the VM.'),
    versions: z
      .strictObject({
        libvirt: z.string().optional().describe('libvirt version.'),
        qemu: z.string().optional().describe('QEMU version.'),
      })
      .optional()
      .describe('Hypervisor component versions.'),
    resources: ResourcesSchema.optional(),
    usbDevices: z
      .array(
        z.strictObject({
          name: z.string().describe('USBDevice name.'),
          attached: z.boolean().describe('Whether the device is attached.'),
          ready: z.boolean().describe('Whether the device is ready.'),
          address: z
            .strictObject({
              bus: int32().describe('USB bus in the guest.'),
              port: int32().describe('USB port in the guest.'),
            })
            .optional()
            .describe('Guest USB address.'),
          hotplugged: z.boolean().optional().describe('Whether the device was attached while the VM ran.'),
        }),
      )
      .optional()
      .describe('USB devices of the VM.'),
    networks: z
      .array(
        z.strictObject({
          id: int32().optional().describe('Interface index.'),
          type: NetworkType.describe('Network type.'),
          name: z.string().optional().describe('Network name.'),
          macAddress: z.string().optional().describe('MAC address of the interface.'),
          virtualMachineMACAddressName: z.string().optional().describe('VirtualMachineMACAddress of the interface.'),
          ipAddress: z.string().optional().describe('IP address of the interface.'),
        }),
      )
      .optional()
      .describe('Network interfaces of the VM.'),
    observedGeneration: observedGeneration(),
  })
  .describe('Observed state of the virtual machine.');
export type VirtualMachineStatus = z.infer<typeof VirtualMachineStatusSchema>;
