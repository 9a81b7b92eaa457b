/** The real Enrichment against the real apiserver: informers, the deleted-objects cache, access reviews. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freshNamespace, newKubeConfig } from '../../env/index.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { KubeEnrichment } from '../../../functions/audit/kube-enrichment.js';
import { vmDetailsByName } from '../../../functions/audit/vm-details.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { applyYaml, installDeckhouseCrds, kc, vmManifest } from './fixtures.js';

describe('KubeEnrichment on a real apiserver', () => {
  let enrichment: KubeEnrichment;
  let ns: string;
  const node = `audit-node-${Date.now().toString(36)}`;

  beforeAll(async () => {
    await installDeckhouseCrds();
    ns = await freshNamespace('audit');
    enrichment = new KubeEnrichment({ client: new KubeClient(newKubeConfig()), log: rootLogger, deletedTtlMs: 60_000, adminTtlMs: 60_000 });
    expect(await enrichment.ready(30_000)).toBe(true);
  });
  afterAll(async () => {
    await enrichment.stop();
    await kc(['delete', 'node', node, '--ignore-not-found']);
  });

  it('enriches a VM from the VM, its disk and its node, as the informers see them', async () => {
    await applyYaml(`apiVersion: v1\nkind: Node\nmetadata: {name: ${node}}\n`);
    await kc([
      'patch',
      'node',
      node,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          addresses: [
            { type: 'InternalIP', address: '10.9.0.7' },
            { type: 'Hostname', address: node },
          ],
        },
      }),
    ]);
    await applyYaml(`apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualDisk\nmetadata: {name: root, namespace: ${ns}}\nspec: {}\n`);
    await kc(['-n', ns, 'patch', 'virtualdisk', 'root', '--subresource=status', '--type=merge', '-p', '{"status":{"storageClassName":"fast"}}']);
    await applyYaml(vmManifest(ns, 'vm-a', 'root'));
    await kc([
      '-n',
      ns,
      'patch',
      'virtualmachine',
      'vm-a',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { nodeName: node, guestOSInfo: { name: 'Debian 13' }, versions: { qemu: '9.2.0', libvirt: '10.9.0' } } }),
    ]);
    const uid = (await kc(['-n', ns, 'get', 'virtualmachine', 'vm-a', '-o', 'jsonpath={.metadata.uid}'])).trim();
    const details = await waitFor('the VM status in the informer', () => {
      const d = vmDetailsByName(ns, 'vm-a', enrichment);
      return d.node_network_address !== 'unknown' && d.storageclasses !== 'unknown' ? d : undefined;
    });
    expect(details).toEqual({
      node_network_address: '10.9.0.7',
      virtual_machine_name: 'vm-a',
      virtual_machine_namespace: ns,
      virtualmachine_uid: uid,
      virtualmachine_os: 'Debian 13',
      storageclasses: 'fast',
      qemu_version: '9.2.0',
      libvirt_version: '10.9.0',
    });
  });

  it('still finds a deleted VirtualDisk and VM, under their own keys', async () => {
    await applyYaml(`apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualDisk\nmetadata: {name: gone, namespace: ${ns}}\nspec: {}\n`);
    await applyYaml(vmManifest(ns, 'vm-gone', 'gone'));
    await waitFor('the VM and disk in the informers', () => (enrichment.getVM(ns, 'vm-gone') && enrichment.getVD(ns, 'gone')) || undefined);
    await kc(['-n', ns, 'delete', 'virtualmachine', 'vm-gone', '--wait=true']);
    await kc(['-n', ns, 'delete', 'virtualdisk', 'gone', '--wait=true']);
    await waitFor('the deletes to reach the informers', () =>
      enrichment.sourceOf('vd', ns, 'gone') === 'deleted' && enrichment.sourceOf('vm', ns, 'vm-gone') === 'deleted' ? true : undefined,
    );
    expect(enrichment.getVD(ns, 'gone')?.metadata?.name).toBe('gone');
    expect(enrichment.getVM(ns, 'vm-gone')?.metadata?.name).toBe('vm-gone');
    expect(enrichment.getPod(ns, 'gone')).toBeUndefined();
  });

  it('reads Modules and ModuleConfigs of deckhouse.io', async () => {
    await applyYaml('apiVersion: deckhouse.io/v1alpha1\nkind: Module\nmetadata: {name: virtualization}\nproperties: {version: v1.2.3}\n');
    await applyYaml('apiVersion: deckhouse.io/v1alpha1\nkind: ModuleConfig\nmetadata: {name: virtualization}\nspec: {enabled: false}\n');
    expect(await waitFor('the Module', () => enrichment.getModule('virtualization')?.properties?.version)).toBe('v1.2.3');
    expect((await waitFor('the ModuleConfig', () => enrichment.getModuleConfig('virtualization')?.spec)).enabled).toBe(false);
  });

  it('asks the apiserver whether a user is an admin, in the real API groups', async () => {
    const user = `mc-editor-${ns}`;
    await applyYaml(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${user}}
rules: [{apiGroups: [deckhouse.io], resources: [moduleconfigs], verbs: [update]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${user}-wrong-group}
rules: [{apiGroups: [authorization.k8s.io], resources: [moduleconfigs, virtualmachineclasses], verbs: [update]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${user}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${user}}
subjects: [{kind: User, name: ${user}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${user}-wrong-group}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${user}-wrong-group}
subjects: [{kind: User, name: wrong-${user}}]
`);
    expect(await enrichment.isAdmin({ username: user })).toBe(true);
    expect(await enrichment.isAdmin({ username: 'nobody', groups: ['system:authenticated'] })).toBe(false);
    expect(await enrichment.isAdmin({ username: `wrong-${user}` })).toBe(false);
    expect(await enrichment.isAdmin({ username: 'root', groups: ['system:masters'] })).toBe(true);
  });
});
