/**
 * The KubeVirt backend objects we produce and read, in their renamed group
 * `internal.virtualization.deckhouse.io` (kinds prefixed InternalVirtualization). Only the fields our
 * code writes or reads are typed; every object is open (`looseObject`), so the rest of KubeVirt's API
 * passes through untouched.
 */
import { z } from 'zod';
import { freeform, quantity, stringMap } from '../k8s/schema.js';

const opt = <T extends z.ZodType>(t: T) => t.optional();
const str = () => z.string().optional();
const int = () => z.int().optional();
const bool = () => z.boolean().optional();

/** KubeVirt's condition: timestamps may be null. */
export const KubeVirtConditionSchema = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: str(),
  message: str(),
  lastProbeTime: z.string().nullable().optional(),
  lastTransitionTime: z.string().nullable().optional(),
});
export type KubeVirtCondition = z.infer<typeof KubeVirtConditionSchema>;

const DiskSchema = z.looseObject({
  name: z.string(),
  bootOrder: int(),
  serial: str(),
  errorPolicy: str(),
  disk: opt(z.looseObject({ bus: str(), readonly: bool() })),
  cdrom: opt(z.looseObject({ bus: str(), readonly: bool() })),
});

const InterfaceSchema = z.looseObject({
  name: z.string(),
  model: str(),
  macAddress: str(),
  acpiIndex: int(),
  state: str(),
  binding: opt(z.looseObject({ name: z.string() })),
});

const VolumeSchema = z.looseObject({
  name: z.string(),
  persistentVolumeClaim: opt(z.looseObject({ claimName: z.string(), readOnly: bool(), hotpluggable: bool() })),
  containerDisk: opt(z.looseObject({ image: z.string(), hotpluggable: bool() })),
  cloudInitNoCloud: opt(z.looseObject({ userData: str(), secretRef: opt(z.looseObject({ name: z.string() })) })),
  sysprep: opt(z.looseObject({ secret: opt(z.looseObject({ name: z.string() })) })),
});

const DomainSchema = z.looseObject({
  cpu: opt(
    z.looseObject({
      cores: int(),
      sockets: int(),
      threads: int(),
      maxSockets: int(),
      model: str(),
      features: opt(z.array(z.looseObject({ name: z.string(), policy: str() }))),
    }),
  ),
  memory: opt(z.looseObject({ guest: opt(quantity()), maxGuest: opt(quantity()) })),
  machine: opt(z.looseObject({ type: str() })),
  firmware: opt(
    z.looseObject({
      serial: str(),
      bootloader: opt(z.looseObject({ bios: opt(freeform()), efi: opt(z.looseObject({ secureBoot: bool(), persistent: bool() })) })),
    }),
  ),
  devices: opt(
    z.looseObject({
      disks: opt(z.array(DiskSchema)),
      interfaces: opt(z.array(InterfaceSchema)),
      autoattachInputDevice: bool(),
      useVirtioTransitional: bool(),
    }),
  ),
  features: opt(freeform()),
  resources: opt(z.looseObject({ requests: opt(z.record(z.string(), quantity())), limits: opt(z.record(z.string(), quantity())) })),
});

/** VirtualMachineInstance spec (also the KVVM template spec). */
export const VMISpecSchema = z.looseObject({
  domain: DomainSchema,
  volumes: opt(z.array(VolumeSchema)),
  networks: opt(z.array(z.looseObject({ name: z.string(), pod: opt(freeform()) }))),
  nodeSelector: opt(stringMap()),
  affinity: opt(freeform()),
  tolerations: opt(z.array(freeform())),
  topologySpreadConstraints: opt(z.array(freeform())),
  terminationGracePeriodSeconds: int(),
  priorityClassName: str(),
});
export type VMISpec = z.infer<typeof VMISpecSchema>;

const templateMetadata = z.looseObject({ labels: opt(stringMap()), annotations: opt(stringMap()) });

export const RunStrategy = z.enum(['Always', 'Manual', 'Halted', 'RerunOnFailure', 'Once', 'WaitAsReceiver']);

export const KVVMSpecSchema = z.looseObject({
  runStrategy: opt(RunStrategy),
  /** `Migration`: a changed claim of a running instance's volume is copied live into the new claim (KubeVirt's volume migration). */
  updateVolumesStrategy: opt(z.enum(['Replacement', 'Migration'])),
  template: z.looseObject({ metadata: opt(templateMetadata), spec: VMISpecSchema }),
});

export const StateChangeRequestSchema = z.looseObject({
  action: z.enum(['Start', 'Stop']),
  uid: z.string().nullable().optional(),
  data: opt(stringMap()),
});

export const KVVMStatusSchema = z.looseObject({
  printableStatus: str(),
  ready: bool(),
  created: bool(),
  runStrategy: str(),
  conditions: opt(z.array(KubeVirtConditionSchema)),
  stateChangeRequests: opt(z.array(StateChangeRequestSchema)),
  volumeRequests: opt(z.array(freeform())),
  observedGeneration: int(),
  desiredGeneration: int(),
});

export const MigrationStateSchema = z.looseObject({
  startTimestamp: z.string().nullable().optional(),
  endTimestamp: z.string().nullable().optional(),
  completed: bool(),
  failed: bool(),
  abortStatus: str(),
  mode: str(),
  sourceNode: str(),
  targetNode: str(),
  sourcePod: str(),
  targetPod: str(),
  migrationUid: str(),
  /** virt-handler on the target node: where the source sends the guest (set once the target is prepared). */
  targetNodeAddress: str(),
  /** virt-handler on the target node: when the migrated guest ran there. */
  targetNodeDomainReadyTimestamp: z.string().nullable().optional(),
  /** virt-handler on the target node: the ports it listens on, each to its destination (0: the migration stream). */
  targetDirectMigrationNodePorts: opt(z.record(z.string(), z.number())),
  /** virt-handler on the source node: why the migration failed. */
  failureReason: str(),
});

const ClaimInfoSchema = z.looseObject({ claimName: z.string(), volumeMode: str() });
export const MigratedVolumeSchema = z.looseObject({ volumeName: z.string(), sourcePVCInfo: opt(ClaimInfoSchema), destinationPVCInfo: opt(ClaimInfoSchema) });
export type MigratedVolume = z.infer<typeof MigratedVolumeSchema>;

export const VMIStatusSchema = z.looseObject({
  phase: str(),
  nodeName: str(),
  reason: str(),
  interfaces: opt(z.array(z.looseObject({ name: str(), ipAddress: str(), ipAddresses: opt(z.array(z.string())), mac: str() }))),
  conditions: opt(z.array(KubeVirtConditionSchema)),
  migrationState: opt(MigrationStateSchema),
  /** The node the instance must leave: set by virt-api's eviction interceptor, cleared by virt-handler once migrated away. */
  evacuationNodeName: str(),
  guestOSInfo: opt(freeform()),
  /** virt-handler's reading of the guest agent: `frozen` while the guest's filesystems are frozen, absent once thawed. */
  fsFreezeStatus: str(),
  activePods: opt(stringMap()),
  launcherContainerImageVersion: str(),
  qosClass: str(),
  volumeStatus: opt(z.array(freeform())),
  /** virt-controller, during a volume migration: each volume's source and destination claim (cleared by virt-handler once migrated). */
  migratedVolumes: z.array(MigratedVolumeSchema).nullable().optional(),
  /** Host devices (USB through DRA) as the instance sees them: phase Ready once the guest has it, address `bus:port`. */
  deviceStatus: opt(
    z.looseObject({
      hostDeviceStatuses: opt(z.array(z.looseObject({ name: z.string(), phase: str(), address: str(), reason: str(), message: str() }))),
    }),
  ),
});

export const VMIMSpecSchema = z.looseObject({ vmiName: z.string(), addedNodeSelector: opt(stringMap()) });
export const VMIMStatusSchema = z.looseObject({
  phase: str(),
  migrationState: opt(MigrationStateSchema),
  conditions: opt(z.array(KubeVirtConditionSchema)),
  phaseTransitionTimestamps: opt(z.array(z.looseObject({ phase: str(), phaseTransitionTimestamp: str() }))),
});

export const KubeVirtSpecSchema = z.looseObject({
  configuration: opt(
    z.looseObject({
      developerConfiguration: opt(z.looseObject({ featureGates: opt(z.array(z.string())) })),
      migrations: opt(freeform()),
    }),
  ),
  customizeComponents: opt(freeform()),
  infra: opt(freeform()),
  workloads: opt(freeform()),
  certificateRotateStrategy: opt(freeform()),
});
export const KubeVirtStatusSchema = z.looseObject({
  phase: str(),
  conditions: opt(z.array(KubeVirtConditionSchema)),
  observedKubeVirtVersion: str(),
});

export const CDISpecSchema = z.looseObject({});
export const CDIStatusSchema = z.looseObject({ phase: str(), conditions: opt(z.array(KubeVirtConditionSchema)) });
