/**
 * The cluster state the golden records are enriched from: one VM with disks on one node, its launcher
 * pod, a module pod, the virtualization Module and a tampered internal VMI. `admins` may update
 * ModuleConfigs.
 */
import type { VDView } from '../enrichment.js';
import { FakeEnrichment, type FakeObjects } from './fake-enrichment.js';

const NODE = {
  metadata: { name: 'node-1' },
  status: {
    addresses: [
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'Hostname', address: 'node-1' },
      { type: 'ExternalIP', address: '203.0.113.5' },
    ],
  },
};

const VM = {
  metadata: { name: 'vm1', namespace: 'ns1', uid: '6c1f2d3e-aaaa-4bbb-8ccc-0123456789ab' },
  spec: {
    blockDeviceRefs: [
      { kind: 'VirtualDisk', name: 'vm1-root' },
      { kind: 'VirtualDisk', name: 'vm1-data' },
      { kind: 'VirtualImage', name: 'ubuntu-iso' },
      { kind: 'VirtualDisk', name: 'vm1-scratch' },
    ],
  },
  status: { nodeName: 'node-1', guestOSInfo: { name: 'Ubuntu 24.04 LTS' }, versions: { qemu: '9.2.0', libvirt: '10.9.0' } },
};

function vd(name: string, storageClassName: string): VDView {
  return { metadata: { name, namespace: 'ns1' }, status: { storageClassName } };
}

const LAUNCHER_POD = {
  // Labelled as real virt-controller labels it through the rewriter (tests/integration/kubevirt/real-kubevirt.test.ts).
  metadata: { name: 'virt-launcher-vm1-x7k2p', namespace: 'ns1', labels: { 'vm.internal.virtualization.deckhouse.io/name': 'vm1' } },
  spec: { nodeName: 'node-1' },
  status: {
    containerStatuses: [{ name: 'd8v-compute', state: { terminated: { message: '{"event":"guest-shutdown","reason":"guest OS powered off"}' } } }],
  },
};

const HANDLER_POD = {
  metadata: {
    name: 'virt-handler-8k2lp',
    namespace: 'd8-virtualization',
    annotations: {
      'versions.virtualization.deckhouse.io/qemu-version': '9.2.0',
      'versions.virtualization.deckhouse.io/libvirt-version': '10.9.0',
    },
  },
  spec: { nodeName: 'node-1' },
};

const TAMPERED_VMI = {
  metadata: {
    name: 'vm1',
    namespace: 'ns1',
    annotations: {
      'integrity.virtualization.deckhouse.io/core-spec-checksum': '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      'integrity.virtualization.deckhouse.io/core-spec-checksum-applied': '60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752',
    },
  },
};

export function worldObjects(): FakeObjects {
  return {
    vms: [VM],
    vds: [vd('vm1-root', 'ceph-rbd'), vd('vm1-data', 'ceph-rbd'), vd('vm1-scratch', 'local-path')],
    pods: [LAUNCHER_POD, HANDLER_POD],
    nodes: [NODE],
    modules: [{ metadata: { name: 'virtualization' }, properties: { version: 'v1.1.0' } }],
    moduleConfigs: [{ metadata: { name: 'virtualization' }, spec: { enabled: true } }],
    internalVMIs: [TAMPERED_VMI],
    admins: ['alice'],
  };
}

export function goldenWorld(): FakeEnrichment {
  return new FakeEnrichment(worldObjects());
}
