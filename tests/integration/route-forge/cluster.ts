/**
 * The cluster side of the route-forge tests: the CiliumNode CRD (Cilium's, not the module's: applied
 * by the tests that need it), CiliumNodes and VMs whose status the test writes as the controller would.
 */
import { fileURLToPath } from 'node:url';
import { ConflictError } from '../../../shared/errors/index.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { CiliumNodeSchema, RoutedVmSchema, ciliumNodeDescriptor, vmDescriptor, type CiliumNode } from '../../../daemons/route-forge/kube.js';
import { kubectl, newKubeConfig } from '../../env/index.js';

export const CILIUM_NODE_CRD = fileURLToPath(new URL('../../../platform/cilium/ciliumnode-crd.yaml', import.meta.url));

/** Apply the CiliumNode CRD and wait until it is Established (idempotent). */
export async function installCiliumNodeCrd(): Promise<void> {
  const apply = await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=virt-testenv', '-f', CILIUM_NODE_CRD]);
  if (apply.code !== 0) throw new Error(`applying ${CILIUM_NODE_CRD} failed: ${apply.stderr}`);
  const wait = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/ciliumnodes.cilium.io']);
  if (wait.code !== 0) throw new Error(`the CiliumNode CRD did not become Established: ${wait.stderr}`);
}

const MANAGER = 'route-forge-test';

/** What the controller would write; null clears a field (merge patch). */
export interface VmStatus {
  ipAddress?: string | null;
  nodeName?: string | null;
}

/** Writes CiliumNodes and VMs (with their status) as admin. */
export class ClusterWriter {
  readonly kube = new KubeClient(newKubeConfig());
  readonly vms = this.kube.resource(vmDescriptor, RoutedVmSchema, MANAGER);
  readonly nodes = this.kube.resource(ciliumNodeDescriptor, CiliumNodeSchema, MANAGER);

  /** A CiliumNode with this CiliumInternalIP (none when undefined), created or replaced. */
  async node(name: string, internalIP: string | undefined): Promise<void> {
    const addresses =
      internalIP === undefined
        ? [{ type: 'InternalIP', ip: '192.0.2.1' }]
        : [
            { type: 'InternalIP', ip: '192.0.2.1' },
            { type: 'CiliumInternalIP', ip: internalIP },
          ];
    const node: CiliumNode = { apiVersion: 'cilium.io/v2', kind: 'CiliumNode', metadata: { name }, spec: { addresses } };
    await this.nodes.apply(node, { force: true });
  }

  /** A VM (a minimal valid spec) with this status address and node. */
  async vm(namespace: string, name: string, status: VmStatus): Promise<void> {
    await this.vms
      .create({
        apiVersion: 'virtualization.deckhouse.io/v1alpha2',
        kind: 'VirtualMachine',
        metadata: { namespace, name },
        spec: { virtualMachineClassName: 'generic', cpu: { cores: 1 }, memory: { size: '1Gi' }, blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'root' }] },
      })
      .catch((err: unknown) => {
        if (!(err instanceof ConflictError)) throw err;
      });
    await this.setStatus(namespace, name, status);
  }

  async setStatus(namespace: string, name: string, status: VmStatus): Promise<void> {
    await this.vms.patchStatus({ namespace, name }, status);
  }

  close(): void {
    this.kube.close();
  }
}
