/** Table cases: VirtualMachine, VirtualMachineClass, VirtualMachinePool. */
import { invalid, type Manifest, type ManifestCase } from './table.js';

/** The original's CEL message for a core fraction out of range. */
const CORE_FRACTION = "Core fraction must be 'Auto' or a percentage between 1% and 100%.";

const API = 'virtualization.deckhouse.io/v1alpha2';
const V1ALPHA3 = 'virtualization.deckhouse.io/v1alpha3';

export const VM_SPEC = {
  virtualMachineClassName: 'generic',
  cpu: { cores: 1 },
  memory: { size: '1Gi' },
  blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'root' }],
};

const object = (kind: string, spec: Record<string, unknown>): Manifest => ({
  apiVersion: API,
  kind,
  metadata: { name: kind.toLowerCase() },
  spec,
});
export const vm = (spec: Record<string, unknown> = {}): Manifest => object('VirtualMachine', { ...VM_SPEC, ...spec });
const disks = (n: number) => Array.from({ length: n }, (_, i) => ({ kind: 'VirtualDisk', name: `d${i}` }));
const legacy = { osType: 'Legacy', bootloader: 'BIOS' };

export const VM_CASES: ManifestCase[] = [
  {
    name: 'a minimal VM gets the documented defaults',
    manifest: vm(),
    expect: {
      valid: true,
      defaults: {
        'spec.runPolicy': 'AlwaysOnUnlessStoppedManually',
        'spec.osType': 'Generic',
        'spec.bootloader': 'BIOS',
        'spec.liveMigrationPolicy': 'PreferSafe',
        'spec.enableParavirtualization': true,
        'spec.terminationGracePeriodSeconds': 60,
        'spec.disruptions': { restartApprovalMode: 'Manual' },
      },
    },
  },
  {
    name: 'a VM with inline user data, EFI, networks and placement is accepted',
    manifest: vm({
      runPolicy: 'Manual',
      cpu: { cores: 4, coreFraction: '5%' },
      memory: { size: '4096Mi' },
      provisioning: { type: 'UserData', userData: '#cloud-config\n' },
      bootloader: 'EFIWithSecureBoot',
      osType: 'Windows',
      networks: [{ type: 'Main' }, { type: 'Network', name: 'lan', id: 2 }],
      nodeSelector: { zone: 'a' },
      tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
      affinity: {
        virtualMachineAndPodAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, virtualMachineAndPodAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } },
          ],
        },
      },
      disruptions: { restartApprovalMode: 'Automatic' },
    }),
    expect: { valid: true, defaults: { 'spec.liveMigrationPolicy': 'PreferSafe' } },
  },
  {
    name: 'a userDataRef gets kind Secret by default',
    manifest: vm({ provisioning: { type: 'UserDataRef', userDataRef: { name: 'cloud-init' } } }),
    expect: { valid: true, defaults: { 'spec.provisioning.userDataRef.kind': 'Secret' } },
  },
  { name: 'coreFraction 100% is accepted', manifest: vm({ cpu: { cores: 2, coreFraction: '100%' } }), expect: { valid: true } },
  { name: 'coreFraction Auto is accepted', manifest: vm({ cpu: { cores: 2, coreFraction: 'Auto' } }), expect: { valid: true } },
  {
    name: 'userData of exactly 2048 bytes is accepted',
    manifest: vm({ provisioning: { type: 'UserData', userData: 'x'.repeat(2048) } }),
    expect: { valid: true },
  },
  {
    name: 'a Legacy VM without paravirtualization may have 4 block devices',
    manifest: vm({ ...legacy, enableParavirtualization: false, blockDeviceRefs: disks(4) }),
    expect: { valid: true },
  },
  { name: 'an unknown runPolicy is rejected', manifest: vm({ runPolicy: 'Sometimes' }), expect: invalid('spec.runPolicy') },
  {
    name: 'coreFraction 0% is rejected',
    manifest: vm({ cpu: { cores: 1, coreFraction: '0%' } }),
    expect: invalid('spec.cpu.coreFraction', CORE_FRACTION),
  },
  {
    name: 'coreFraction 101% is rejected',
    manifest: vm({ cpu: { cores: 1, coreFraction: '101%' } }),
    expect: invalid('spec.cpu.coreFraction', CORE_FRACTION),
  },
  { name: 'negative cores are rejected', manifest: vm({ cpu: { cores: -1 } }), expect: invalid('spec.cpu.cores') },
  {
    name: '17 block devices are rejected',
    manifest: vm({ blockDeviceRefs: disks(17) }),
    expect: invalid('spec.blockDeviceRefs'),
  },
  { name: 'no block devices are rejected', manifest: vm({ blockDeviceRefs: [] }), expect: invalid('spec.blockDeviceRefs') },
  {
    name: 'userData over 2048 bytes is rejected',
    manifest: vm({ provisioning: { type: 'UserData', userData: 'x'.repeat(2049) } }),
    expect: invalid('spec.provisioning.userData', '`userData` exceeds 2048 byte limit; should use `userDataRef` for larger data.'),
  },
  {
    // 1,100 two-byte characters: within 2048 characters, past KubeVirt's 2048 bytes.
    name: 'non-ASCII userData over 2048 bytes (but not characters) is rejected',
    manifest: vm({ provisioning: { type: 'UserData', userData: 'ж'.repeat(1100) } }),
    expect: invalid('spec.provisioning.userData', '`userData` exceeds 2048 byte limit; should use `userDataRef` for larger data.'),
  },
  {
    name: 'non-ASCII userData of exactly 2048 bytes is accepted',
    manifest: vm({ provisioning: { type: 'UserData', userData: 'ж'.repeat(1024) } }),
    expect: { valid: true },
  },
  {
    name: 'osType Legacy with EFI is rejected',
    manifest: vm({ osType: 'Legacy', bootloader: 'EFI' }),
    expect: invalid('spec.bootloader', 'The Legacy osType requires the BIOS bootloader.'),
  },
  {
    name: 'osType Legacy with provisioning is rejected',
    manifest: vm({ ...legacy, provisioning: { type: 'UserData', userData: 'x' } }),
    expect: invalid('spec.provisioning', 'The Legacy osType does not support provisioning: such operating systems have no cloud-init or Sysprep support.'),
  },
  {
    name: 'a Legacy VM without paravirtualization and 5 block devices is rejected',
    manifest: vm({ ...legacy, enableParavirtualization: false, blockDeviceRefs: disks(5) }),
    expect: invalid('spec.blockDeviceRefs', 'The Legacy osType with enableParavirtualization=false supports at most 4 block devices.'),
  },
  {
    name: 'provisioning type UserData with a userDataRef is rejected',
    manifest: vm({ provisioning: { type: 'UserData', userDataRef: { name: 'x' } } }),
    expect: invalid('spec.provisioning.userData'),
  },
  {
    name: 'a VM without cpu is rejected',
    manifest: object('VirtualMachine', { ...VM_SPEC, cpu: undefined }),
    expect: invalid('spec.cpu'),
  },
  {
    name: 'a VM without virtualMachineClassName is rejected',
    manifest: object('VirtualMachine', { ...VM_SPEC, virtualMachineClassName: undefined }),
    expect: invalid('spec.virtualMachineClassName'),
  },
  {
    name: 'a block device of an unknown kind is rejected',
    manifest: vm({ blockDeviceRefs: [{ kind: 'Pod', name: 'x' }] }),
    expect: invalid('spec.blockDeviceRefs[0].kind'),
  },
  { name: 'an unknown spec field is rejected', manifest: vm({ cpus: 2 }), expect: invalid('spec.cpus') },
  {
    name: 'a memory size that is not a quantity is rejected',
    manifest: vm({ memory: { size: 'lots' } }),
    expect: invalid('spec.memory.size'),
  },
  {
    name: 'nine USB devices are rejected',
    manifest: vm({ usbDevices: Array.from({ length: 9 }, (_, i) => ({ name: `u${i}` })) }),
    expect: invalid('spec.usbDevices'),
  },
  {
    name: 'affinity terms with matchLabelKeys and mismatchLabelKeys are accepted',
    manifest: vm({
      affinity: {
        virtualMachineAndPodAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'zone', matchLabelKeys: ['app'], mismatchLabelKeys: ['tenant'] },
          ],
        },
      },
    }),
    expect: { valid: true },
  },
  {
    name: 'matchLabelKeys that is not a list is rejected',
    manifest: vm({
      affinity: {
        virtualMachineAndPodAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', matchLabelKeys: 'app' }],
        },
      },
    }),
    expect: invalid('spec.affinity.virtualMachineAndPodAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys'),
  },
  {
    name: 'a mismatchLabelKeys entry that is not a string is rejected',
    manifest: vm({
      affinity: {
        virtualMachineAndPodAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', mismatchLabelKeys: [5] }],
        },
      },
    }),
    expect: invalid('spec.affinity.virtualMachineAndPodAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].mismatchLabelKeys[0]'),
  },
  {
    name: 'an affinity weight of 101 is rejected',
    manifest: vm({
      affinity: {
        virtualMachineAndPodAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 101, virtualMachineAndPodAffinityTerm: { topologyKey: 'zone' } }],
        },
      },
    }),
    expect: invalid('spec.affinity.virtualMachineAndPodAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight'),
  },
  {
    name: 'a topology spread constraint with the four fields the original has is accepted',
    manifest: vm({
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } },
      ],
    }),
    expect: { valid: true },
  },
  {
    name: 'a VM topology spread constraint with minDomains is rejected as the original refuses it',
    manifest: vm({ topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', minDomains: 2 }] }),
    expect: invalid('spec.topologySpreadConstraints[0].minDomains'),
  },
  {
    name: 'a VM topology spread constraint with matchLabelKeys is rejected as the original refuses it',
    manifest: vm({ topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', matchLabelKeys: ['a'] }] }),
    expect: invalid('spec.topologySpreadConstraints[0].matchLabelKeys'),
  },
  {
    name: 'a topology spread constraint without whenUnsatisfiable is rejected',
    manifest: vm({ topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone' }] }),
    expect: invalid('spec.topologySpreadConstraints[0].whenUnsatisfiable'),
  },
  {
    name: 'a memory size given as an integer is rejected (the original takes a quantity string)',
    manifest: vm({ memory: { size: 1073741824 } }),
    expect: invalid('spec.memory.size'),
  },
  { name: 'an empty memory size is rejected', manifest: vm({ memory: { size: '' } }), expect: invalid('spec.memory.size') },
  {
    name: 'cores beyond int32 are rejected at the cores field',
    manifest: vm({ cpu: { cores: 2147483648 } }),
    expect: invalid('spec.cpu.cores'),
  },
  {
    name: 'a fractional terminationGracePeriodSeconds is rejected at its field',
    manifest: vm({ terminationGracePeriodSeconds: 1.5 }),
    expect: invalid('spec.terminationGracePeriodSeconds'),
  },
  {
    name: 'a toleration seconds beyond int64 is rejected at its field',
    manifest: vm({ tolerations: [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 1e30 }] }),
    expect: invalid('spec.tolerations[0].tolerationSeconds'),
  },
  { name: 'cores as a string are rejected', manifest: vm({ cpu: { cores: '2' } }), expect: invalid('spec.cpu.cores') },
  { name: 'an empty virtualMachineClassName is rejected', manifest: vm({ virtualMachineClassName: '' }), expect: invalid('spec.virtualMachineClassName') },
  {
    name: 'an empty virtualMachineIPAddressName is rejected',
    manifest: vm({ virtualMachineIPAddressName: '' }),
    expect: invalid('spec.virtualMachineIPAddressName'),
  },
  { name: 'an empty priorityClassName is rejected', manifest: vm({ priorityClassName: '' }), expect: invalid('spec.priorityClassName') },
  {
    name: 'an empty block device name is rejected',
    manifest: vm({ blockDeviceRefs: [{ kind: 'VirtualDisk', name: '' }] }),
    expect: invalid('spec.blockDeviceRefs[0].name'),
  },
  {
    name: 'an empty network name is rejected',
    manifest: vm({ networks: [{ type: 'Main' }, { type: 'Network', name: '' }] }),
    expect: invalid('spec.networks[1].name'),
  },
  {
    name: 'an empty virtualMachineMACAddressName is rejected',
    manifest: vm({ networks: [{ type: 'Main', virtualMachineMACAddressName: '' }] }),
    expect: invalid('spec.networks[0].virtualMachineMACAddressName'),
  },
  {
    name: 'an empty ipAddressName is rejected',
    manifest: vm({ networks: [{ type: 'Main' }, { type: 'Network', name: 'lan', ipAddressName: '' }] }),
    expect: invalid('spec.networks[1].ipAddressName'),
  },
  {
    name: 'a network of an unknown type is rejected',
    manifest: vm({ networks: [{ type: 'Bridge' }] }),
    expect: invalid('spec.networks[0].type'),
  },
  { name: 'an empty USB device name is rejected', manifest: vm({ usbDevices: [{ name: '' }] }), expect: invalid('spec.usbDevices[0].name') },
  { name: 'an empty GPU class name is rejected', manifest: vm({ gpus: [{ gpuClassName: '' }] }), expect: invalid('spec.gpus[0].gpuClassName') },
  {
    name: 'an empty userDataRef name is rejected',
    manifest: vm({ provisioning: { type: 'UserDataRef', userDataRef: { name: '' } } }),
    expect: invalid('spec.provisioning.userDataRef.name'),
  },
  {
    name: 'an empty sysprepRef name is rejected',
    manifest: vm({ provisioning: { type: 'SysprepRef', sysprepRef: { name: '' } } }),
    expect: invalid('spec.provisioning.sysprepRef.name'),
  },
  {
    name: 'a userDataRef of kind ConfigMap is rejected',
    manifest: vm({ provisioning: { type: 'UserDataRef', userDataRef: { kind: 'ConfigMap', name: 'x' } } }),
    expect: invalid('spec.provisioning.userDataRef.kind'),
  },
  {
    name: 'a GPU class name over 253 characters is rejected',
    manifest: vm({ gpus: [{ gpuClassName: 'a'.repeat(254) }] }),
    expect: invalid('spec.gpus[0].gpuClassName'),
  },
  {
    name: 'a GPU class name that is not a DNS subdomain is rejected',
    manifest: vm({ gpus: [{ gpuClassName: 'Bad_Name' }] }),
    expect: invalid('spec.gpus[0].gpuClassName'),
  },
];

const vmclass = (spec: Record<string, unknown>): Manifest => object('VirtualMachineClass', spec);
const policy = { cores: { min: 1, max: 4, step: 1 }, coreFractions: [5, 10, 100], defaultCoreFraction: 10 };

export const VMCLASS_CASES: ManifestCase[] = [
  {
    name: 'a Model class with sizing policies is accepted',
    manifest: vmclass({
      cpu: { type: 'Model', model: 'Nehalem' },
      sizingPolicies: [policy, { cores: { min: 5, max: 8 }, memory: { min: '1Gi', max: '8Gi', perCore: { min: '1Gi' } } }],
      nodeSelector: { matchExpressions: [{ key: 'node-role', operator: 'Exists' }] },
    }),
    expect: { valid: true },
  },
  {
    name: 'a Discovery class with a node selector is accepted',
    manifest: vmclass({
      cpu: { type: 'Discovery', discovery: { nodeSelector: { matchLabels: { a: 'b' } } } },
      sizingPolicies: [{ ...policy, defaultCoreFraction: 'Auto' }],
    }),
    expect: { valid: true },
  },
  {
    name: 'a Model class without a model is rejected',
    manifest: vmclass({ cpu: { type: 'Model' } }),
    expect: invalid('spec.cpu.model'),
  },
  {
    name: 'a Host class with features is rejected',
    manifest: vmclass({ cpu: { type: 'Host', features: ['vmx'] } }),
    expect: invalid('spec.cpu.features'),
  },
  { name: 'an unknown CPU type is rejected', manifest: vmclass({ cpu: { type: 'Arm' } }), expect: invalid('spec.cpu.type') },
  {
    name: 'a sizing policy whose max cores do not exceed min is rejected',
    manifest: vmclass({ cpu: { type: 'Host' }, sizingPolicies: [{ cores: { min: 4, max: 4 } }] }),
    expect: invalid('spec.sizingPolicies[0].cores.max', 'The maximum must be greater than the minimum'),
  },
  {
    name: 'defaultCoreFraction 0 is rejected',
    manifest: vmclass({ cpu: { type: 'Host' }, sizingPolicies: [{ ...policy, defaultCoreFraction: 0 }] }),
    expect: invalid('spec.sizingPolicies[0].defaultCoreFraction'),
  },
  {
    name: 'defaultCoreFraction "Half" is rejected',
    manifest: vmclass({ cpu: { type: 'Host' }, sizingPolicies: [{ ...policy, defaultCoreFraction: 'Half' }] }),
    expect: invalid('spec.sizingPolicies[0].defaultCoreFraction'),
  },
  { name: 'a class without cpu is rejected', manifest: vmclass({}), expect: invalid('spec.cpu') },
  {
    name: 'a v1alpha3 class with percent core fractions is accepted',
    manifest: { ...vmclass({ cpu: { type: 'Host' }, sizingPolicies: [{ cores: { min: 1, max: 4 }, coreFractions: ['5%', '100%'], defaultCoreFraction: '5%' }] }), apiVersion: V1ALPHA3 },
    expect: { valid: true },
  },
  {
    name: 'a v1alpha3 class with integer core fractions is rejected',
    manifest: { ...vmclass({ cpu: { type: 'Host' }, sizingPolicies: [{ cores: { min: 1, max: 4 }, coreFractions: [5] }] }), apiVersion: V1ALPHA3 },
    expect: invalid('spec.sizingPolicies[0].coreFractions[0]'),
  },
  {
    name: 'a v1alpha3 class with defaultCoreFraction "Half" is rejected',
    manifest: { ...vmclass({ cpu: { type: 'Host' }, sizingPolicies: [{ cores: { min: 1, max: 4 }, defaultCoreFraction: 'Half' }] }), apiVersion: V1ALPHA3 },
    expect: invalid('spec.sizingPolicies[0].defaultCoreFraction'),
  },
  {
    name: 'a v1alpha3 class with a core fraction of 0% is rejected',
    manifest: { ...vmclass({ cpu: { type: 'Host' }, sizingPolicies: [{ cores: { min: 1, max: 4 }, coreFractions: ['0%'] }] }), apiVersion: V1ALPHA3 },
    expect: invalid('spec.sizingPolicies[0].coreFractions[0]'),
  },
];

const POOL_VM_SPEC = { ...VM_SPEC, liveMigrationPolicy: 'PreferSafe' };
const template = (name: string) => ({ name, spec: { persistentVolumeClaim: { size: '10Gi' } } });
export const pool = (spec: Record<string, unknown> = {}): Manifest =>
  object('VirtualMachinePool', {
    replicas: 2,
    scaleDownPolicy: 'NewestFirst',
    virtualDiskTemplates: [template('root')],
    virtualMachineTemplate: { metadata: { labels: { app: 'web' } }, spec: POOL_VM_SPEC },
    ...spec,
  });

export const POOL_CASES: ManifestCase[] = [
  {
    name: 'a pool gets the reclaim and VM defaults',
    manifest: pool({ virtualDiskTemplates: [{ ...template('root'), reclaim: {} }] }),
    expect: {
      valid: true,
      defaults: {
        'spec.virtualDiskTemplates.0.reclaim': { onScaleDown: 'Delete', keep: 0 },
        'spec.virtualMachineTemplate.spec.runPolicy': 'AlwaysOnUnlessStoppedManually',
      },
    },
  },
  {
    name: 'a pool retaining disks with keep and ttl and liveMigrationPolicy Never is accepted',
    manifest: pool({
      virtualDiskTemplates: [{ ...template('root'), reclaim: { onScaleDown: 'Retain', keep: 2, ttl: '24h' } }],
      virtualMachineTemplate: { spec: { ...POOL_VM_SPEC, liveMigrationPolicy: 'Never' } },
    }),
    expect: { valid: true },
  },
  {
    name: 'a disk template no VM references is rejected',
    manifest: pool({ virtualDiskTemplates: [template('root'), template('data')] }),
    expect: invalid('spec.virtualDiskTemplates'),
  },
  {
    name: 'a VirtualDisk reference without a template is rejected',
    manifest: pool({
      virtualMachineTemplate: {
        spec: { ...POOL_VM_SPEC, blockDeviceRefs: [...VM_SPEC.blockDeviceRefs, { kind: 'VirtualDisk', name: 'other' }] },
      },
    }),
    expect: invalid('spec.virtualMachineTemplate.spec.blockDeviceRefs'),
  },
  {
    name: 'a Legacy VM template is rejected',
    manifest: pool({ virtualMachineTemplate: { spec: { ...POOL_VM_SPEC, ...legacy } } }),
    expect: invalid('spec.virtualMachineTemplate.spec.osType'),
  },
  {
    name: 'keep without ttl is rejected',
    manifest: pool({ virtualDiskTemplates: [{ ...template('root'), reclaim: { onScaleDown: 'Retain', keep: 1 } }] }),
    expect: invalid('spec.virtualDiskTemplates[0].reclaim.ttl', 'keep requires ttl; without ttl free disks are never garbage-collected, so keep would have no effect'),
  },
  {
    name: 'a ttl on a disk template deleted on scale-down is rejected',
    manifest: pool({ virtualDiskTemplates: [{ ...template('root'), reclaim: { onScaleDown: 'Delete', ttl: '1h' } }] }),
    expect: invalid('spec.virtualDiskTemplates[0].reclaim', 'keep and ttl are only valid with onScaleDown: Retain'),
  },
  {
    name: 'two disk templates with the same name are rejected',
    manifest: pool({ virtualDiskTemplates: [template('root'), template('root')] }),
    expect: invalid('spec.virtualDiskTemplates'),
  },
  {
    name: 'a pool template with the full pod spread constraint and an integer memory size is accepted (as the original)',
    manifest: pool({
      virtualMachineTemplate: {
        spec: {
          ...POOL_VM_SPEC,
          memory: { size: 1073741824 },
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', minDomains: 2, matchLabelKeys: ['app'] },
          ],
        },
      },
    }),
    expect: { valid: true },
  },
  {
    name: 'a pool template without liveMigrationPolicy is rejected (the original requires it there)',
    manifest: pool({ virtualMachineTemplate: { spec: VM_SPEC } }),
    expect: invalid('spec.virtualMachineTemplate.spec.liveMigrationPolicy'),
  },
  {
    name: 'a pool template with an unknown liveMigrationPolicy is rejected',
    manifest: pool({ virtualMachineTemplate: { spec: { ...POOL_VM_SPEC, liveMigrationPolicy: 'Sometimes' } } }),
    expect: invalid('spec.virtualMachineTemplate.spec.liveMigrationPolicy'),
  },
  {
    name: 'a pool without scaleDownPolicy is rejected',
    manifest: pool({ scaleDownPolicy: undefined }),
    expect: invalid('spec.scaleDownPolicy'),
  },
  {
    name: 'negative replicas are rejected',
    manifest: pool({ replicas: -1 }),
    expect: invalid('spec.replicas'),
  },
  {
    name: 'a pool template with GPUs is rejected (the original pool has no gpus field)',
    manifest: pool({ virtualMachineTemplate: { spec: { ...POOL_VM_SPEC, gpus: [{ gpuClassName: 'a100' }] } } }),
    expect: invalid('spec.virtualMachineTemplate.spec.gpus'),
  },
  {
    name: 'a pool disk template with a SHA-1 checksum is rejected (the original pool takes md5 and sha256)',
    manifest: pool({
      virtualDiskTemplates: [
        { name: 'root', spec: { dataSource: { type: 'HTTP', http: { url: 'https://example.com/a.img', checksum: { sha1: 'ab'.repeat(20) } } } } },
      ],
    }),
    expect: invalid('spec.virtualDiskTemplates[0].spec.dataSource.http.checksum.sha1'),
  },
  {
    name: 'a pool disk template with an md5 checksum and an Upload one without settings are accepted',
    manifest: pool({
      virtualDiskTemplates: [
        { name: 'root', spec: { dataSource: { type: 'HTTP', http: { url: 'https://example.com/a.img', checksum: { md5: 'ab'.repeat(16) } } } } },
        { name: 'data', spec: { dataSource: { type: 'Upload' } } },
      ],
      virtualMachineTemplate: {
        spec: { ...POOL_VM_SPEC, blockDeviceRefs: [...VM_SPEC.blockDeviceRefs, { kind: 'VirtualDisk', name: 'data' }] },
      },
    }),
    expect: { valid: true },
  },
  {
    name: 'a pool disk template with upload settings is rejected',
    manifest: pool({ virtualDiskTemplates: [{ name: 'root', spec: { dataSource: { type: 'Upload', upload: {} } } }] }),
    expect: invalid('spec.virtualDiskTemplates[0].spec.dataSource.upload'),
  },
];
