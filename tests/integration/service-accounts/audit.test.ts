/**
 * The audit function's enrichment (functions/audit/kube-enrichment.ts: one informer per resource)
 * and admin check (admin-check.ts: SubjectAccessReviews) under exactly the RBAC the install gives it
 * (knative/rbac/components/audit.yaml), through a client impersonating its ServiceAccount: every
 * informer syncs and sees the objects, the admin check answers, the apiserver refuses none of the
 * requests, removing any one rule makes one of them denied, and the role grants nothing unused.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { KubeEnrichment } from '../../../functions/audit/kube-enrichment.js';
import { freshNamespace, installDeckhouseCrds, kubectl, newKubeConfig } from '../../env/index.js';
import {
  applyComponentRbac,
  itNeedsEveryRuleAndNothingMore,
  describeRequest,
  loadComponentRbac,
  requestsMadeBy,
  serviceAccountClient,
  type ApiRequest,
  type ComponentRbac,
  type SeenRequest,
  applyYaml,
  itActsAsItsServiceAccount,
  everyListWatched,
} from './component-rbac.js';
import { waitFor } from '../../../shared/testing/wait.js';

const id = randomBytes(3).toString('hex');
const node = `audit-sa-${id}`;
const module = `audit-sa-${id}`;
const admin = new KubeClient(newKubeConfig());
let rbac: ComponentRbac;
let kube: KubeClient;
let ns = '';
let requests: ApiRequest[] = [];

const apply = (yaml: string): Promise<void> => applyYaml(yaml, 'audit-sa-test');

beforeAll(async () => {
  rbac = await loadComponentRbac('audit');
  await Promise.all([applyComponentRbac(rbac), installDeckhouseCrds()]);
  kube = serviceAccountClient(rbac, { requestTimeoutMs: 10_000 });
  ns = await freshNamespace('audit-sa');
  await apply(`apiVersion: v1
kind: Node
metadata: {name: ${node}}
---
apiVersion: v1
kind: Pod
metadata: {name: virt-launcher-vm1, namespace: ${ns}}
spec: {nodeName: ${node}, containers: [{name: compute, image: dev.local/none}]}
---
apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualDisk
metadata: {name: root, namespace: ${ns}}
spec: {}
---
apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachine
metadata: {name: vm1, namespace: ${ns}}
spec:
  virtualMachineClassName: generic
  cpu: {cores: 1}
  memory: {size: 1Gi}
  blockDeviceRefs: [{kind: VirtualDisk, name: root}]
---
apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineOperation
metadata: {name: stop-vm1, namespace: ${ns}}
spec: {type: Stop, virtualMachineName: vm1}
---
apiVersion: internal.virtualization.deckhouse.io/v1
kind: InternalVirtualizationVirtualMachineInstance
metadata: {name: vm1, namespace: ${ns}}
spec: {domain: {devices: {}}}
---
apiVersion: deckhouse.io/v1alpha1
kind: Module
metadata: {name: ${module}}
properties: {version: v0.0.1}
---
apiVersion: deckhouse.io/v1alpha1
kind: ModuleConfig
metadata: {name: ${module}}
spec: {enabled: true}
`);
});

afterAll(async () => {
  kube.close();
  admin.close();
  await kubectl(['delete', 'node', node, '--ignore-not-found']);
  await kubectl(['delete', 'modules.deckhouse.io,moduleconfigs.deckhouse.io', module, '--ignore-not-found']);
});

describe('the audit enrichment with only the audit ServiceAccount rights', () => {
  itActsAsItsServiceAccount('audit', () => ({ kube, rbac }));

  it('syncs every informer, finds every kind of object and answers the admin check, refused nothing', async () => {
    const since = Date.now();
    const running = new KubeEnrichment({ client: serviceAccountClient(rbac), log: rootLogger, deletedTtlMs: 60_000, adminTtlMs: 0 });
    let seen: SeenRequest[];
    try {
      expect(await running.ready(30_000)).toBe(true);
      expect(running.getVM(ns, 'vm1')?.metadata?.name).toBe('vm1');
      expect(running.getVD(ns, 'root')?.metadata?.name).toBe('root');
      expect(running.getVMOP(ns, 'stop-vm1')?.spec?.type).toBe('Stop');
      expect(running.getPod(ns, 'virt-launcher-vm1')?.spec?.nodeName).toBe(node);
      expect(running.getNode(node)?.metadata?.name).toBe(node);
      expect(running.getModule(module)?.properties?.version).toBe('v0.0.1');
      expect(running.getModuleConfig(module)?.spec?.enabled).toBe(true);
      expect(running.getInternalVMI(ns, 'vm1')?.metadata?.name).toBe('vm1');
      expect(await running.isAdmin({ username: 'root', groups: ['system:masters'] })).toBe(true);
      expect(await running.isAdmin({ username: `nobody-${id}`, groups: ['system:authenticated'] })).toBe(false);
      seen = await waitFor('a watch for every list', async () => {
        const now = await requestsMadeBy(kube, rbac, since);
        return everyListWatched(now) ? now : undefined;
      });
    } finally {
      await running.stop();
    }
    requests = seen.map((s) => s.request);
    expect(requests.filter((r) => r.verb === 'list')).toHaveLength(8);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
  });

  itNeedsEveryRuleAndNothingMore('the informers and the admin check do', () => ({ admin, rbac, requests }));
});
