/** What the platform and its demo create, as plain manifests (applied with kubectl as the acting user). */
import { API_VERSION } from '../../shared/api/resources/common.js';

export const DEMO_NAMESPACE = 'demo';
export const DEMO_VM = 'demo-vm';
export const DEMO_DISK = 'demo-root';
export const DEMO_IMAGE = 'demo-image';
/** The root disk's size (the image's content fills its start). */
export const DISK_SIZE = '1Gi';
/** A blank data disk, hot-plugged into the running VM. */
export const DEMO_DATA_DISK = 'demo-data';
export const DEMO_CLASS = 'generic';
/** A user bound to the Admin role of the role model in the demo namespace: creates and operates the VM. */
export const OPERATOR = { name: 'alice', role: 'd8:user-authz:virtualization:admin' };
/** A user bound to the User role: may look, not act. */
export const VIEWER = { name: 'bob', role: 'd8:user-authz:virtualization:user' };

type Manifest = Record<string, unknown>;

/** The module's configuration: VM addresses from `vmCidr` (validated by our admission webhook on its way in). */
export function moduleConfig(vmCidr: string, dvcrGcSchedule?: string): Manifest {
  return {
    apiVersion: 'deckhouse.io/v1alpha1',
    kind: 'ModuleConfig',
    metadata: { name: 'virtualization' },
    spec: {
      enabled: true,
      version: 1,
      settings: {
        dvcr: {
          storage: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { size: '50Gi' } },
          ...(dvcrGcSchedule !== undefined ? { gc: { schedule: dvcrGcSchedule } } : {}),
        },
        virtualMachineCIDRs: [vmCidr],
      },
    },
  };
}

export function namespace(): Manifest {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEMO_NAMESPACE } };
}

export function roleBinding(user: { name: string; role: string }): Manifest {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${user.name}-virtualization`, namespace: DEMO_NAMESPACE },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user.role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user.name }],
  };
}

export function vmClass(): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineClass',
    metadata: { name: DEMO_CLASS, annotations: { 'virtualmachineclass.virtualization.deckhouse.io/is-default-class': 'true' } },
    spec: {
      cpu: { type: 'Model', model: 'Nehalem' },
      sizingPolicies: [{ cores: { min: 1, max: 4 }, coreFractions: [10, 25, 50, 100], defaultCoreFraction: 25 }],
    },
  };
}

/** The demo's image: a qcow2 from an HTTP URL (with its sha256), kept in DVCR. */
export function image(url: string, sha256: string): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualImage',
    metadata: { name: DEMO_IMAGE, namespace: DEMO_NAMESPACE },
    spec: { storage: 'ContainerRegistry', dataSource: { type: 'HTTP', http: { url, checksum: { sha256 } } } },
  };
}

/** The VM's root disk: from the demo image, or blank where no image can be served to the cluster (--kubeconfig). */
export function disk(from: 'image' | 'blank'): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualDisk',
    metadata: { name: DEMO_DISK, namespace: DEMO_NAMESPACE },
    spec:
      from === 'image'
        ? { dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: DEMO_IMAGE } }, persistentVolumeClaim: { size: DISK_SIZE } }
        : { persistentVolumeClaim: { size: DISK_SIZE } },
  };
}

export function vm(): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachine',
    metadata: { name: DEMO_VM, namespace: DEMO_NAMESPACE, labels: { app: 'demo' } },
    spec: {
      virtualMachineClassName: DEMO_CLASS,
      runPolicy: 'AlwaysOn',
      cpu: { cores: 1, coreFraction: '50%' },
      memory: { size: '1Gi' },
      blockDeviceRefs: [{ kind: 'VirtualDisk', name: DEMO_DISK }],
    },
  };
}

export function operation(name: string, type: 'Restart' | 'Migrate' | 'Stop'): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineOperation',
    metadata: { name, namespace: DEMO_NAMESPACE },
    spec: { type, virtualMachineName: DEMO_VM },
  };
}

/** A blank data disk, hot-plugged later by an attachment. */
export function dataDisk(): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualDisk',
    metadata: { name: DEMO_DATA_DISK, namespace: DEMO_NAMESPACE },
    spec: { persistentVolumeClaim: { size: '100Mi' } },
  };
}

export function attachment(): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineBlockDeviceAttachment',
    metadata: { name: DEMO_DATA_DISK, namespace: DEMO_NAMESPACE },
    spec: { virtualMachineName: DEMO_VM, blockDeviceRef: { kind: 'VirtualDisk', name: DEMO_DATA_DISK } },
  };
}
