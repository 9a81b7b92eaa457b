/** VirtualMachine spec (also the template of a VirtualMachinePool). */
import { z } from 'zod';
import { LabelSelectorSchema, NodeAffinitySchema, TolerationSchema, TopologySpreadConstraintSchema, VMTopologySpreadConstraintSchema } from '../k8s/core.js';
import { type CelRule, DNS1123_SUBDOMAIN, QUANTITY_PATTERN, fieldForType, int32, int64, quantity, stringMap, withRules } from '../k8s/schema.js';

export const CORE_FRACTION_PATTERN = /^(Auto|(100|[1-9][0-9]?)%)$/;

export const RunPolicy = z
  .enum(['AlwaysOn', 'AlwaysOff', 'Manual', 'AlwaysOnUnlessStoppedManually'])
  .describe(
    'Power policy. AlwaysOn: always running, restarted after a guest shutdown. AlwaysOff: kept stopped. ' +
      'Manual: started and stopped only by the user (VirtualMachineOperation or guest shutdown). ' +
      'AlwaysOnUnlessStoppedManually: started on creation and kept running unless stopped by the user.',
  );
export const OsType = z.enum(['Windows', 'Generic', 'Legacy']);
export const Bootloader = z.enum(['BIOS', 'EFI', 'EFIWithSecureBoot']);
export const LIVE_MIGRATION_POLICIES = ['AlwaysSafe', 'PreferSafe', 'AlwaysForced', 'PreferForced'] as const;
export const BlockDeviceKind = z.enum(['ClusterVirtualImage', 'VirtualImage', 'VirtualDisk']);
export const NetworkType = z.enum(['Main', 'Network', 'ClusterNetwork']);

const userDataMaxSize = 2048;

const secretRef = (what: string) =>
  z
    .strictObject({
      kind: z.enum(['Secret']).default('Secret').describe('Kind of the referenced object; only Secret.'),
      name: z.string().min(1).describe('Name of the Secret in the namespace of the virtual machine.'),
    })
    .describe(what);

const ProvisioningSchema = withRules(
  z.strictObject({
    type: z.enum(['UserData', 'UserDataRef', 'SysprepRef']).describe('Which source provides the guest configuration.'),
    userData: withRules(z.string().describe('Inline cloud-init user data.'), [
      {
        // Bytes of UTF-8, as KubeVirt counts them (the original's rule counts characters, so it lets
        // non-ASCII data through that KubeVirt then refuses).
        rule: `bytes(self).size() <= ${userDataMaxSize}`,
        message: `\`userData\` exceeds ${userDataMaxSize} byte limit; should use \`userDataRef\` for larger data.`,
        holds: (s) => Buffer.byteLength(s, 'utf8') <= userDataMaxSize,
      },
    ]).optional(),
    userDataRef: secretRef(
      'Secret of type provisioning.virtualization.deckhouse.io/cloud-init holding cloud-init user data (key userData or userdata).',
    ).optional(),
    sysprepRef: secretRef('Secret of type provisioning.virtualization.deckhouse.io/sysprep holding autounattend.xml or unattend.xml.').optional(),
  }),
  [fieldForType('userData', 'UserData'), fieldForType('userDataRef', 'UserDataRef'), fieldForType('sysprepRef', 'SysprepRef')],
).describe('Guest OS initialization: cloud-init user data or a Windows sysprep answer file.');

const WEIGHT = 'must be from 1 to 100';

const affinityTerm = z.strictObject({
  labelSelector: LabelSelectorSchema.optional(),
  namespaces: z.array(z.string()).optional().describe('Namespaces the label selector applies to.'),
  topologyKey: z.string().describe('Node label whose value defines co-location.'),
  namespaceSelector: LabelSelectorSchema.optional(),
  matchLabelKeys: z
    .array(z.string())
    .optional()
    .describe('Label keys of the incoming VM whose values are ANDed with labelSelector (pod affinity matchLabelKeys).'),
  mismatchLabelKeys: z.array(z.string()).optional().describe('Label keys of the incoming VM whose values must differ (pod affinity mismatchLabelKeys).'),
});

const vmAndPodAffinity = (what: string) =>
  z
    .strictObject({
      requiredDuringSchedulingIgnoredDuringExecution: z
        .array(affinityTerm.describe('VMs and pods matching the term, by topology domain.'))
        .optional()
        .describe('Terms that must hold for the VM to be scheduled.'),
      preferredDuringSchedulingIgnoredDuringExecution: z
        .array(
          z.strictObject({
            weight: int32().min(1, WEIGHT).max(100, WEIGHT).describe('Weight 1-100 added when the term matches.'),
            virtualMachineAndPodAffinityTerm: affinityTerm.describe('VMs and pods matching the term.'),
          }),
        )
        .optional()
        .describe('Terms the scheduler tries to satisfy.'),
    })
    .describe(what);

const AffinitySchema = z
  .strictObject({
    nodeAffinity: NodeAffinitySchema.optional(),
    virtualMachineAndPodAffinity: vmAndPodAffinity('Place the VM near matching VMs and pods.').optional(),
    virtualMachineAndPodAntiAffinity: vmAndPodAffinity('Keep the VM away from matching VMs and pods.').optional(),
  })
  .describe('Scheduling constraints relative to nodes and to other virtual machines and pods.');

const BlockDeviceRefSchema = z.strictObject({
  kind: BlockDeviceKind.describe('Kind of the block device.'),
  name: z.string().min(1).describe('Name of the block device.'),
  bootOrder: int32().min(1).optional().describe('Boot priority, 1 first; without any, the list order is used.'),
});

const VirtualMachineSpecBase = z.strictObject({
  virtualMachineClassName: z.string().min(1).describe('VirtualMachineClass for CPU model and sizing; the cluster default class when left empty.'),
  runPolicy: RunPolicy.default('AlwaysOnUnlessStoppedManually'),
  cpu: z
    .strictObject({
      cores: int32().min(1).describe('Number of virtual CPU cores.'),
      coreFraction: z
        .string()
        .regex(CORE_FRACTION_PATTERN)
        .optional()
        .describe('Guaranteed share of each core, 1%-100%, or Auto; filled from the class when empty.'),
    })
    .describe('CPU resources.'),
  memory: z
    .strictObject({
      size: z.string().regex(QUANTITY_PATTERN, 'must be a Kubernetes quantity such as "4Gi"').describe('Amount of memory as a quantity string, e.g. 4Gi.'),
    })
    .describe('Memory.'),
  blockDeviceRefs: z.array(BlockDeviceRefSchema).min(1).max(16).describe('Disks and images attached to the VM, in boot order unless bootOrder is set.'),
  provisioning: ProvisioningSchema.optional(),
  virtualMachineIPAddressName: z.string().min(1).optional().describe('VirtualMachineIPAddress for the main network; one is created when empty.'),
  networks: z
    .array(
      z.strictObject({
        id: int32().optional().describe('Interface index; Main is 1, others are filled from 2 when empty.'),
        type: NetworkType.describe('Main (cluster pod network), Network or ClusterNetwork.'),
        name: z.string().min(1).optional().describe('Name of the Network or ClusterNetwork; absent for Main.'),
        virtualMachineMACAddressName: z.string().min(1).optional().describe('VirtualMachineMACAddress of the interface.'),
        ipAddressName: z.string().min(1).optional().describe('IP address resource of the interface.'),
      }),
    )
    .optional()
    .describe('Network interfaces of the VM.'),
  usbDevices: z
    .array(z.strictObject({ name: z.string().min(1).describe('Name of a USBDevice in the namespace.') }))
    .max(8)
    .optional()
    .describe('USB devices passed through to the VM.'),
  gpus: z
    .array(
      z.strictObject({
        gpuClassName: z.string().min(1).max(253).regex(DNS1123_SUBDOMAIN).describe('GPUClass to allocate a GPU from.'),
      }),
    )
    .max(16)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'atomic' })
    .describe('GPUs allocated to the VM.'),
  nodeSelector: stringMap().optional().describe('Node labels the VM must be scheduled on.'),
  affinity: AffinitySchema.optional(),
  tolerations: z.array(TolerationSchema).optional().describe('Node taints the VM tolerates.'),
  topologySpreadConstraints: z.array(VMTopologySpreadConstraintSchema).optional().describe('Spread of VMs across domains.'),
  priorityClassName: z.string().min(1).optional().describe('PriorityClass of the VM pod.'),
  disruptions: z
    .strictObject({
      restartApprovalMode: z
        .enum(['Manual', 'Automatic'])
        .optional()
        .describe('Manual: changes needing a restart wait for the user. Automatic: the VM is restarted.'),
    })
    .default({ restartApprovalMode: 'Manual' })
    .describe('How disruptive changes are applied.'),
  terminationGracePeriodSeconds: int64().default(60).describe('Seconds given to the guest to shut down.'),
  enableParavirtualization: z.boolean().default(true).describe('Use virtio devices (SCSI disks, virtio NIC).'),
  osType: OsType.default('Generic').describe('Guest OS family; selects machine type and devices.'),
  bootloader: Bootloader.default('BIOS').describe('Firmware: BIOS, EFI or EFI with Secure Boot.'),
  liveMigrationPolicy: z.enum(LIVE_MIGRATION_POLICIES).default('PreferSafe').describe('Whether live migration may slow the guest down (Forced) to converge.'),
});

/** The fields the spec-level rules read. */
interface RuleFields {
  cpu: { coreFraction?: string | undefined };
  osType: string;
  bootloader: string;
  provisioning?: unknown;
  enableParavirtualization: boolean;
  blockDeviceRefs: readonly unknown[];
}

const specRules: CelRule<RuleFields>[] = [
  {
    rule: "!has(self.cpu.coreFraction) || self.cpu.coreFraction.matches('^(Auto|(100|[1-9][0-9]?)%)$')",
    message: "Core fraction must be 'Auto' or a percentage between 1% and 100%.",
    fieldPath: '.cpu.coreFraction',
    holds: (s) => s.cpu.coreFraction === undefined || CORE_FRACTION_PATTERN.test(s.cpu.coreFraction),
  },
  {
    rule: "self.osType != 'Legacy' || self.bootloader == 'BIOS'",
    message: 'The Legacy osType requires the BIOS bootloader.',
    fieldPath: '.bootloader',
    holds: (s) => s.osType !== 'Legacy' || s.bootloader === 'BIOS',
  },
  {
    rule: "self.osType != 'Legacy' || !has(self.provisioning)",
    message: 'The Legacy osType does not support provisioning: such operating systems have no cloud-init or Sysprep support.',
    fieldPath: '.provisioning',
    reason: 'FieldValueForbidden',
    holds: (s) => s.osType !== 'Legacy' || s.provisioning === undefined,
  },
  {
    rule: "self.osType != 'Legacy' || self.enableParavirtualization || size(self.blockDeviceRefs) <= 4",
    message: 'The Legacy osType with enableParavirtualization=false supports at most 4 block devices.',
    fieldPath: '.blockDeviceRefs',
    holds: (s) => s.osType !== 'Legacy' || s.enableParavirtualization === true || s.blockDeviceRefs.length <= 4,
  },
];

export const VirtualMachineSpecSchema = withRules(VirtualMachineSpecBase, specRules).describe('Desired state of the virtual machine.');
export type VirtualMachineSpec = z.infer<typeof VirtualMachineSpecSchema>;

/**
 * The VM spec inside a VirtualMachinePool template, as the original's pool CRD has it: liveMigrationPolicy
 * also allows Manual and Never, osType only Generic or Windows (no Legacy guest in a pool), no GPUs.
 */
export const PoolVirtualMachineSpecSchema = withRules(
  VirtualMachineSpecBase.omit({ gpus: true }).extend({
    osType: z.enum(['Windows', 'Generic']).default('Generic').describe('Guest OS family; selects machine type and devices (Legacy is not offered in a pool).'),
    memory: z.strictObject({ size: quantity().describe('Amount of memory, e.g. 4Gi.') }).describe('Memory.'),
    topologySpreadConstraints: z.array(TopologySpreadConstraintSchema).optional().describe('Spread of VMs across domains.'),
    liveMigrationPolicy: z
      .enum([...LIVE_MIGRATION_POLICIES, 'Manual', 'Never'])
      .describe('Whether live migration may slow the guest down (Forced) to converge; Manual or Never disable it (required here).'),
  }),
  specRules,
).describe('Spec of every virtual machine of the pool.');
