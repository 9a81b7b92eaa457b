/**
 * The test control plane runs a real kube-controller-manager: namespaces finish terminating and the
 * garbage collector follows ownerReferences, as in a cluster.
 */
import { describe, expect, it } from '@jest/globals';
import { waitFor } from '../../shared/testing/wait.js';
import { freshNamespace, kubectl } from './index.js';

describe('kube-controller-manager in the test control plane', () => {
  it('lets a deleted namespace and what it holds disappear', async () => {
    const ns = await freshNamespace('kcm-ns');
    const created = await kubectl(['-n', ns, 'create', 'configmap', 'left-inside', '--from-literal=a=b']);
    expect(created.code).toBe(0);
    expect((await kubectl(['delete', 'namespace', ns, '--wait=false'])).code).toBe(0);
    await waitFor('the namespace to be gone', async () => (await kubectl(['get', 'namespace', ns])).stderr.includes('NotFound'), { timeoutMs: 60_000 });
  }, 90_000);

  it('collects an internal VM whose owning VirtualMachine was deleted', async () => {
    const ns = await freshNamespace('kcm-gc');
    const apply = async (obj: object): Promise<{ metadata: { uid: string } }> => {
      const res = await kubectl(['apply', '-o', 'json', '-f', '-'], { stdin: JSON.stringify(obj) });
      if (res.code !== 0) throw new Error(res.stderr);
      return JSON.parse(res.stdout) as { metadata: { uid: string } };
    };
    const vm = await apply({
      apiVersion: 'virtualization.deckhouse.io/v1alpha2',
      kind: 'VirtualMachine',
      metadata: { namespace: ns, name: 'owner' },
      spec: { virtualMachineClassName: 'generic', cpu: { cores: 1 }, memory: { size: '1Gi' }, blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'd' }] },
    });
    await apply({
      apiVersion: 'internal.virtualization.deckhouse.io/v1',
      kind: 'InternalVirtualizationVirtualMachine',
      metadata: {
        namespace: ns,
        name: 'owner',
        ownerReferences: [
          {
            apiVersion: 'virtualization.deckhouse.io/v1alpha2',
            kind: 'VirtualMachine',
            name: 'owner',
            uid: vm.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      // KubeVirt's schema requires a domain.
      spec: { template: { spec: { domain: { devices: {} } } } },
    });
    expect((await kubectl(['-n', ns, 'delete', 'virtualmachines.virtualization.deckhouse.io', 'owner', '--wait=false'])).code).toBe(0);
    await waitFor(
      'the garbage collector to delete the internal VM',
      async () => {
        const res = await kubectl(['-n', ns, 'get', 'internalvirtualizationvirtualmachines.internal.virtualization.deckhouse.io', 'owner']);
        return res.stderr.includes('NotFound');
      },
      { timeoutMs: 60_000 },
    );
  }, 90_000);
});
