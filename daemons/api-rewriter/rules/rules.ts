/**
 * The rename rules between KubeVirt's API (`*.kubevirt.io`) and the names its CRDs are stored under in
 * this module (`*.internal.virtualization.deckhouse.io`), as the original's kubevirt_rules.go states
 * them (facts: deckhouse-api-and-controller.md, section 2.2). Data only; `Renamer` (names.ts) indexes it.
 */

export interface ResourceRule {
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
}

export interface GroupRule {
  /** The original group, e.g. `kubevirt.io`. */
  readonly group: string;
  /** The group it is stored under, e.g. `internal.virtualization.deckhouse.io`. */
  readonly renamed: string;
  readonly versions: readonly string[];
  readonly preferredVersion: string;
  readonly resources: readonly ResourceRule[];
}

/** Keys (labels, annotations, finalizers): exact names, and prefixes (the part before "/"). */
export interface KeyRules {
  readonly names: Readonly<Record<string, string>>;
  readonly prefixes: Readonly<Record<string, string>>;
}

/** A label whose value is renamed (e.g. `app.kubernetes.io/managed-by=virt-operator`). */
export interface LabelValueRule {
  readonly key: string;
  readonly value: string;
  readonly renamed: string;
}

export interface RewriteRules {
  readonly kindPrefix: string;
  readonly resourcePrefix: string;
  readonly shortNamePrefix: string;
  /** Categories of every renamed resource on the server (the originals are restored on the way back). */
  readonly renamedCategories: readonly string[];
  /** Prefix that hides a label, annotation or finalizer already in original form on the server. */
  readonly preservedPrefix: string;
  readonly groups: readonly GroupRule[];
  readonly labels: KeyRules;
  readonly labelValues: readonly LabelValueRule[];
  readonly annotations: KeyRules;
  readonly finalizers: KeyRules;
  /** Webhook paths (of the webhook proxy) and the original group and resource their reviews are about. */
  readonly webhooks: Readonly<Record<string, { readonly group: string; readonly resource: string }>>;
}

const INTERNAL = 'internal.virtualization.deckhouse.io';

function res(kind: string, plural: string, shortNames: string[] = [], categories: string[] = ['all']): ResourceRule {
  return { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames, categories };
}

const kubevirtCategories = ['all'];

export const KUBEVIRT_RULES: RewriteRules = {
  kindPrefix: 'InternalVirtualization',
  resourcePrefix: 'internalvirtualization',
  shortNamePrefix: 'intvirt',
  renamedCategories: ['intvirt'],
  preservedPrefix: 'preserved-original-',
  groups: [
    {
      group: 'kubevirt.io',
      renamed: INTERNAL,
      versions: ['v1', 'v1alpha3'],
      preferredVersion: 'v1',
      resources: [
        res('KubeVirt', 'kubevirts', ['kv', 'kvs'], kubevirtCategories),
        res('VirtualMachine', 'virtualmachines', ['vm', 'vms'], kubevirtCategories),
        res('VirtualMachineInstance', 'virtualmachineinstances', ['vmi', 'vmis'], kubevirtCategories),
        res('VirtualMachineInstanceMigration', 'virtualmachineinstancemigrations', ['vmim', 'vmims'], kubevirtCategories),
        res('VirtualMachineInstancePreset', 'virtualmachineinstancepresets', ['vmipreset', 'vmipresets'], kubevirtCategories),
        res('VirtualMachineInstanceReplicaSet', 'virtualmachineinstancereplicasets', ['vmirs', 'vmirss'], kubevirtCategories),
      ],
    },
    {
      group: 'cdi.kubevirt.io',
      renamed: `cdi.${INTERNAL}`,
      versions: ['v1beta1'],
      preferredVersion: 'v1beta1',
      resources: [
        res('CDI', 'cdis', ['cdi', 'cdis'], []),
        res('CDIConfig', 'cdiconfigs', [], []),
        res('DataVolume', 'datavolumes', ['dv', 'dvs'], ['all']),
        res('DataSource', 'datasources', ['das'], ['all']),
        res('DataImportCron', 'dataimportcrons', ['dic', 'dics'], ['all']),
        res('StorageProfile', 'storageprofiles', [], []),
        res('ObjectTransfer', 'objecttransfers', ['ot', 'ots'], []),
        res('VolumeImportSource', 'volumeimportsources', [], []),
        res('VolumeUploadSource', 'volumeuploadsources', [], []),
        res('VolumeCloneSource', 'volumeclonesources', [], []),
      ],
    },
    {
      group: 'clone.kubevirt.io',
      renamed: `clone.${INTERNAL}`,
      versions: ['v1alpha1'],
      preferredVersion: 'v1alpha1',
      resources: [res('VirtualMachineClone', 'virtualmachineclones', ['vmclone', 'vmclones'], kubevirtCategories)],
    },
    {
      group: 'export.kubevirt.io',
      renamed: `export.${INTERNAL}`,
      versions: ['v1alpha1'],
      preferredVersion: 'v1alpha1',
      resources: [res('VirtualMachineExport', 'virtualmachineexports', ['vmexport', 'vmexports'], kubevirtCategories)],
    },
    {
      group: 'instancetype.kubevirt.io',
      renamed: `instancetype.${INTERNAL}`,
      versions: ['v1alpha1', 'v1alpha2'],
      preferredVersion: 'v1alpha2',
      resources: [
        res('VirtualMachineInstancetype', 'virtualmachineinstancetypes', ['vminstancetype', 'vminstancetypes', 'vmf', 'vmfs'], kubevirtCategories),
        res('VirtualMachinePreference', 'virtualmachinepreferences', ['vmpref', 'vmprefs', 'vmp', 'vmps'], kubevirtCategories),
        res(
          'VirtualMachineClusterInstancetype',
          'virtualmachineclusterinstancetypes',
          ['vmclusterinstancetype', 'vmclusterinstancetypes', 'vmcf', 'vmcfs'],
          [],
        ),
        res('VirtualMachineClusterPreference', 'virtualmachineclusterpreferences', ['vmcp', 'vmcps'], []),
      ],
    },
    {
      group: 'migrations.kubevirt.io',
      renamed: `migrations.${INTERNAL}`,
      versions: ['v1alpha1'],
      preferredVersion: 'v1alpha1',
      resources: [res('MigrationPolicy', 'migrationpolicies', [], kubevirtCategories)],
    },
    {
      group: 'pool.kubevirt.io',
      renamed: `pool.${INTERNAL}`,
      versions: ['v1alpha1'],
      preferredVersion: 'v1alpha1',
      resources: [res('VirtualMachinePool', 'virtualmachinepools', ['vmpool', 'vmpools'], kubevirtCategories)],
    },
    {
      group: 'snapshot.kubevirt.io',
      renamed: `snapshot.${INTERNAL}`,
      versions: ['v1alpha1'],
      preferredVersion: 'v1alpha1',
      resources: [
        res('VirtualMachineRestore', 'virtualmachinerestores', ['vmrestore', 'vmrestores'], kubevirtCategories),
        res('VirtualMachineSnapshotContent', 'virtualmachinesnapshotcontents', ['vmsnapshotcontent', 'vmsnapshotcontents'], kubevirtCategories),
        res('VirtualMachineSnapshot', 'virtualmachinesnapshots', ['vmsnapshot', 'vmsnapshots'], kubevirtCategories),
      ],
    },
  ],
  labels: {
    names: {
      'kubevirt.io': `kubevirt.${INTERNAL}`,
      'operator.kubevirt.io': `operator.kubevirt.${INTERNAL}`,
      'prometheus.kubevirt.io': `prometheus.kubevirt.${INTERNAL}`,
      'node-labeller.kubevirt.io/skip-node': 'node-labeller.virtualization.deckhouse.io/skip-node',
      'node-labeller.kubevirt.io/obsolete-host-model': `node-labeller.${INTERNAL}/obsolete-host-model`,
    },
    prefixes: {
      'kubevirt.io': `kubevirt.${INTERNAL}`,
      'prometheus.kubevirt.io': `prometheus.${INTERNAL}`,
      'operator.kubevirt.io': `operator.${INTERNAL}`,
      'vm.kubevirt.io': `vm.${INTERNAL}`,
      ...Object.fromEntries(
        [
          'cpu-feature',
          'cpu-model-migration',
          'cpu-model',
          'cpu-timer',
          'cpu-vendor',
          'scheduling',
          'host-model-cpu',
          'host-model-required-features',
          'hyperv',
          'machine-type',
        ].map((p) => [`${p}.node.kubevirt.io`, `${p}.node.virtualization.deckhouse.io`]),
      ),
    },
  },
  labelValues: [
    { key: 'app.kubernetes.io/managed-by', value: 'virt-operator', renamed: 'virt-operator-internal-virtualization' },
    { key: 'app.kubernetes.io/managed-by', value: 'kubevirt-operator', renamed: 'kubevirt-operator-internal-virtualization' },
  ],
  annotations: {
    names: {},
    prefixes: {
      'kubevirt.io': `kubevirt.${INTERNAL}`,
      'certificates.kubevirt.io': `certificates.kubevirt.${INTERNAL}`,
    },
  },
  finalizers: {
    names: {},
    prefixes: { 'kubevirt.io': `kubevirt.${INTERNAL}` },
  },
  webhooks: {
    '/virtualmachineinstances-validate-create': { group: 'kubevirt.io', resource: 'virtualmachineinstances' },
    '/virtualmachineinstances-validate-update': { group: 'kubevirt.io', resource: 'virtualmachineinstances' },
    '/virtualmachines-validate': { group: 'kubevirt.io', resource: 'virtualmachines' },
    '/virtualmachinereplicaset-validate': { group: 'kubevirt.io', resource: 'virtualmachineinstancereplicasets' },
    '/virtualmachinepool-validate': { group: 'pool.kubevirt.io', resource: 'virtualmachinepools' },
    '/vmipreset-validate': { group: 'kubevirt.io', resource: 'virtualmachineinstancepresets' },
    '/migration-validate-create': { group: 'kubevirt.io', resource: 'virtualmachineinstancemigrations' },
    '/migration-validate-update': { group: 'kubevirt.io', resource: 'virtualmachineinstancemigrations' },
    '/virtualmachinesnapshots-validate': { group: 'snapshot.kubevirt.io', resource: 'virtualmachinesnapshots' },
    '/virtualmachinerestores-validate': { group: 'snapshot.kubevirt.io', resource: 'virtualmachinerestores' },
    '/virtualmachineexports-validate': { group: 'export.kubevirt.io', resource: 'virtualmachineexports' },
    '/virtualmachineinstancetypes-validate': { group: 'instancetype.kubevirt.io', resource: 'virtualmachineinstancetypes' },
    '/virtualmachineclusterinstancetypes-validate': { group: 'instancetype.kubevirt.io', resource: 'virtualmachineclusterinstancetypes' },
    '/virtualmachinepreferences-validate': { group: 'instancetype.kubevirt.io', resource: 'virtualmachinepreferences' },
    '/virtualmachineclusterpreferences-validate': { group: 'instancetype.kubevirt.io', resource: 'virtualmachineclusterpreferences' },
    '/status-validate': { group: 'kubevirt.io', resource: 'virtualmachines' },
    '/migration-policy-validate-create': { group: 'migrations.kubevirt.io', resource: 'migrationpolicies' },
    '/vm-clone-validate-create': { group: 'clone.kubevirt.io', resource: 'virtualmachineclones' },
    '/kubevirt-validate-delete': { group: 'kubevirt.io', resource: 'kubevirts' },
    '/kubevirt-validate-update': { group: 'kubevirt.io', resource: 'kubevirts' },
    '/virtualmachines-mutate': { group: 'kubevirt.io', resource: 'virtualmachines' },
    '/virtualmachineinstances-mutate': { group: 'kubevirt.io', resource: 'virtualmachineinstances' },
    '/migration-mutate-create': { group: 'kubevirt.io', resource: 'virtualmachineinstancemigrations' },
    '/vm-clone-mutate-create': { group: 'clone.kubevirt.io', resource: 'virtualmachineclones' },
  },
};
