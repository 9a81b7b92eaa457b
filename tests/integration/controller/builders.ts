/** Builders of the objects the tests create, with the defaults the CRDs would fill in. */
import { API_VERSION } from '../../../shared/api/resources/common.js';
import type { VirtualDisk } from '../../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../shared/api/resources/virtualimage.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass.js';
import type { VirtualMachineOperation } from '../../../shared/api/resources/vmop.js';
import type { Clients, Node } from '../../../daemons/controller/kube/resources.js';
import { SCOPE_LABEL, type Scope } from './scope.js';

type VMSpec = VirtualMachine['spec'];

export function vmClass(scope: Scope, name: string, spec: Partial<VirtualMachineClass['spec']> = {}): VirtualMachineClass {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineClass',
    metadata: { name: `${name}-${scope.id}`, labels: { [SCOPE_LABEL]: scope.id } },
    spec: { cpu: { type: 'Model', model: 'Nehalem' }, nodeSelector: { matchLabels: { [SCOPE_LABEL]: scope.id } }, ...spec },
  };
}

export function node(scope: Scope, name: string, labels: Record<string, string> = {}, spec: Node['spec'] = {}): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: `${name}-${scope.id}`, labels: { [SCOPE_LABEL]: scope.id, ...labels } }, spec };
}

export function vm(scope: Scope, name: string, className: string, spec: Partial<VMSpec> = {}): VirtualMachine {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachine',
    metadata: { name, namespace: scope.namespace },
    spec: {
      virtualMachineClassName: className,
      runPolicy: 'AlwaysOnUnlessStoppedManually',
      cpu: { cores: 2, coreFraction: '50%' },
      memory: { size: '2Gi' },
      blockDeviceRefs: [],
      disruptions: { restartApprovalMode: 'Manual' },
      terminationGracePeriodSeconds: 60,
      enableParavirtualization: true,
      osType: 'Generic',
      bootloader: 'BIOS',
      liveMigrationPolicy: 'PreferSafe',
      ...spec,
    },
  };
}

export function disk(scope: Scope, name: string): VirtualDisk {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualDisk',
    metadata: { name, namespace: scope.namespace },
    spec: { persistentVolumeClaim: { size: '10Gi' } },
  };
}

export function image(scope: Scope, name: string): VirtualImage {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualImage',
    metadata: { name, namespace: scope.namespace },
    spec: { storage: 'ContainerRegistry', dataSource: { type: 'HTTP', http: { url: 'https://example.com/ubuntu.qcow2' } } },
  };
}

export function clusterImage(scope: Scope, name: string): ClusterVirtualImage {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterVirtualImage',
    metadata: { name: `${name}-${scope.id}`, labels: { [SCOPE_LABEL]: scope.id } },
    spec: { dataSource: { type: 'HTTP', http: { url: 'https://example.com/alpine.qcow2' } } },
  };
}

export function vmop(
  scope: Scope,
  name: string,
  vmName: string,
  type: VirtualMachineOperation['spec']['type'],
  extra: Partial<VirtualMachineOperation['spec']> = {},
): VirtualMachineOperation {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineOperation',
    metadata: { name, namespace: scope.namespace },
    spec: { type, virtualMachineName: vmName, ...extra },
  };
}

/** Play the disk controller: the disk is Ready on its PVC. */
export async function makeDiskReady(c: Clients, scope: Scope, name: string): Promise<void> {
  await c.disks.patchStatus(
    { namespace: scope.namespace, name },
    { phase: 'Ready', capacity: '10Gi', target: { persistentVolumeClaimName: `vd-${name}-pvc` } },
  );
}

/** Play the image controller: the image is Ready in DVCR. */
export async function makeImageReady(c: Clients, scope: Scope, name: string): Promise<void> {
  await c.images.patchStatus(
    { namespace: scope.namespace, name },
    { phase: 'Ready', cdrom: false, size: { unpacked: '2Gi' }, target: { registryURL: `dvcr.d8-virtualization.svc/vi/${scope.namespace}/${name}:1` } },
  );
}

export async function makeClusterImageReady(c: Clients, name: string): Promise<void> {
  await c.clusterImages.patchStatus(
    { name },
    { phase: 'Ready', cdrom: false, size: { unpacked: '1Gi' }, target: { registryURL: `dvcr.d8-virtualization.svc/cvi/${name}:1` } },
  );
}
