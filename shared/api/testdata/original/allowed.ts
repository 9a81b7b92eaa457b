/**
 * The reviewed differences between our CRDs and the original's published ones (see compare.ts): each
 * group gives the reason the difference stays. The comparison test fails on any difference not listed
 * here and on any entry here that no longer differs.
 */
export const ALLOWED_DIFFERENCES: readonly { reason: string; differences: readonly string[] }[] = [
  {
    reason:
      "spec is required at the root of the kinds whose spec has required fields or is the whole request; the original leaves it optional and fails such objects later (webhook or controller). Nobody creates them without spec.",
    differences: [
      "ClusterVirtualImage v1alpha2 <root>: required",
      "VirtualDisk v1alpha2 <root>: required",
      "VirtualImage v1alpha2 <root>: required",
      "VirtualMachineOperation v1alpha2 <root>: required",
      "VirtualMachinePool v1alpha2 <root>: required",
    ],
  },
  {
    reason:
      "Container image references follow the OCI distribution grammar (any digest algorithm, `__`), written without Go named groups so RE2 and JavaScript read the same text; the original's pattern also accepts paths no registry serves (shared/api/README.md).",
    differences: [
      "ClusterVirtualImage v1alpha2 spec.dataSource.containerImage.image: pattern",
      "VirtualDisk v1alpha2 spec.dataSource.containerImage.image: pattern",
      "VirtualImage v1alpha2 spec.dataSource.containerImage.image: pattern",
      "VirtualMachinePool v1alpha2 spec.virtualDiskTemplates[].spec.dataSource.containerImage.image: pattern",
    ],
  },
  {
    reason:
      "Extra checksum algorithms and the Upload settings object, from the facts of a later original (sha1, sha512, Streebog; upload.checksum); they only add accepted input.",
    differences: [
      "ClusterVirtualImage v1alpha2 spec.dataSource.http.checksum.sha1: only in ours",
      "ClusterVirtualImage v1alpha2 spec.dataSource.http.checksum.sha512: only in ours",
      "ClusterVirtualImage v1alpha2 spec.dataSource.http.checksum.streebog256: only in ours",
      "ClusterVirtualImage v1alpha2 spec.dataSource.http.checksum.streebog512: only in ours",
      "ClusterVirtualImage v1alpha2 spec.dataSource.upload: only in ours",
      "VirtualDisk v1alpha2 spec.dataSource.http.checksum.sha1: only in ours",
      "VirtualDisk v1alpha2 spec.dataSource.http.checksum.sha512: only in ours",
      "VirtualDisk v1alpha2 spec.dataSource.http.checksum.streebog256: only in ours",
      "VirtualDisk v1alpha2 spec.dataSource.http.checksum.streebog512: only in ours",
      "VirtualDisk v1alpha2 spec.dataSource.upload: only in ours",
      "VirtualImage v1alpha2 spec.dataSource.http.checksum.sha1: only in ours",
      "VirtualImage v1alpha2 spec.dataSource.http.checksum.sha512: only in ours",
      "VirtualImage v1alpha2 spec.dataSource.http.checksum.streebog256: only in ours",
      "VirtualImage v1alpha2 spec.dataSource.http.checksum.streebog512: only in ours",
      "VirtualImage v1alpha2 spec.dataSource.upload: only in ours",
    ],
  },
  {
    reason:
      "dataSource.type is required by the schema; in the original every CEL rule of dataSource reads self.type, so a dataSource without type is refused there too, with a CEL evaluation error instead of a named field.",
    differences: [
      "VirtualDisk v1alpha2 spec.dataSource: required",
      "VirtualImage v1alpha2 spec.dataSource: required",
      "VirtualMachinePool v1alpha2 spec.virtualDiskTemplates[].spec.dataSource: required",
    ],
  },
  {
    reason:
      "storage has a default (ContainerRegistry), so requiring it adds nothing after defaulting; the original lists it in required and defaults it too.",
    differences: [
      "VirtualImage v1alpha2 spec: required",
    ],
  },
  {
    reason:
      "A block device reference names its kind and name (required in our schema and in the original's pool template, generated from the same Go type); the original's hand-written VM/VMBDA schemas leave them optional and fail later in the webhook.",
    differences: [
      "VirtualMachineBlockDeviceAttachment v1alpha2 spec.blockDeviceRef: required",
      "VirtualMachine v1alpha2 spec.blockDeviceRefs[]: required",
    ],
  },
  {
    reason:
      "A sizing policy without cores makes no sense (the original's webhook requires cores in at least one policy and compares core ranges); ours requires it per policy.",
    differences: [
      "VirtualMachineClass v1alpha2 spec.sizingPolicies[]: required",
      "VirtualMachineClass v1alpha3 spec.sizingPolicies[]: required",
    ],
  },
  {
    reason:
      "v1alpha2 defaultCoreFraction is int-or-string (1-100 or \"Auto\", CEL-checked) as in the original's Go types of the studied version; the published file at this commit has a plain integer. Ours accepts a superset.",
    differences: [
      "VirtualMachineClass v1alpha2 spec.sizingPolicies[].defaultCoreFraction: type",
    ],
  },
  {
    reason:
      "A bare address or lease object (no spec) is accepted as by the original; ours defaults spec so that code never sees an absent spec ({type: Auto} for an IP address, how the original's controller treats it).",
    differences: [
      "VirtualMachineIPAddress v1alpha2 spec: default",
      "VirtualMachineIPAddressLease v1alpha2 spec: default",
      "VirtualMachineMACAddress v1alpha2 spec: default",
      "VirtualMachineMACAddressLease v1alpha2 spec: default",
    ],
  },
  {
    reason:
      "VirtualMachineOperation migrate.nodeSelector (type Migrate to selected nodes) is in the facts of a later original than the published file at this commit.",
    differences: [
      "VirtualMachineOperation v1alpha2 spec.migrate: only in ours",
    ],
  },
  {
    reason:
      "The pool template spec is required: a pool without a VM spec has nothing to stamp out; the original fails it in its CEL rules (has(self.virtualMachineTemplate.spec)).",
    differences: [
      "VirtualMachinePool v1alpha2 spec.virtualMachineTemplate: required",
    ],
  },
  {
    reason:
      "The pool template reuses our VirtualMachine spec where its members need it: coreFraction `Auto` (capitalised, as the VM CRD and the webhooks spell it, so a member VM is accepted; the pool file at this commit has `auto`) and the VM's enums for network and provisioning types (a member with a type we cannot make is refused at the pool, not at every member). Written in shared/api/README.md.",
    differences: [
      "VirtualMachinePool v1alpha2 spec.virtualMachineTemplate.spec.cpu.coreFraction: pattern",
      "VirtualMachinePool v1alpha2 spec.virtualMachineTemplate.spec.networks[].type: enum",
      "VirtualMachinePool v1alpha2 spec.virtualMachineTemplate.spec.provisioning.type: enum",
    ],
  },
  {
    reason:
      "Fields with a default (userDataRef/sysprepRef kind Secret; VM snapshot keepIPAddress Always, requiredConsistency true) are required in the original and defaulted in both, so the same objects are accepted after defaulting.",
    differences: [
      "VirtualMachine v1alpha2 spec.provisioning.userDataRef: required",
      "VirtualMachine v1alpha2 spec.provisioning.sysprepRef: required",
      "VirtualMachineSnapshot v1alpha2 spec: required",
    ],
  },
  {
    reason:
      "Not built here: the SPICE display, PCI passthrough and SR-IOV underlay networks (vlanID, UnderlayNetwork) came to the original after the studied version; a manifest using them is refused with the field named.",
    differences: [
      "VirtualMachine v1alpha2 spec.spice: only in the original",
      "VirtualMachine v1alpha2 spec.networks[].type: enum",
      "VirtualMachine v1alpha2 spec.networks[].vlanID: only in the original",
      "VirtualMachine v1alpha2 spec.pciDevices: only in the original",
    ],
  },
  {
    reason:
      "v1alpha3 core fractions are checked as percentages in the schema (\"5%\", default \"Auto\" or a percentage), the form the original's webhook and the conversion expect; the original's published schema takes any string and fails such values in its webhook or conversion.",
    differences: [
      "VirtualMachineClass v1alpha3 spec.sizingPolicies[].coreFractions[]: pattern",
      "VirtualMachineClass v1alpha3 spec.sizingPolicies[].defaultCoreFraction: pattern",
    ],
  },
];
