/**
 * The admission function's lookups (functions/admission/kube/) under exactly the RBAC the install
 * gives it (knative/rbac/components/admission.yaml), through a client impersonating its
 * ServiceAccount: every lookup of the Lookups interface reads what exists, the apiserver refuses none
 * of the requests, removing any one rule makes one of those requests denied, and the role grants
 * nothing the lookups do not request.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../../shared/kube/index.js';
import { LookupCache } from '../../../shared/cache/lookup-cache.js';
import { KubeLookups } from '../../../functions/admission/kube/lookups.js';
import type { Lookups } from '../../../functions/admission/lookups.js';
import { freshNamespace, installDeckhouseCrds, kubectl, newKubeConfig } from '../../env/index.js';
import {
  applyComponentRbac,
  itNeedsEveryRuleAndNothingMore,
  describeRequest,
  loadComponentRbac,
  requestsMadeBy,
  serviceAccountClient,
  whoAmI,
  type ApiRequest,
  type ComponentRbac,
  applyYaml,
} from './component-rbac.js';

const id = randomBytes(3).toString('hex');
const names = { vmClass: `adm-sa-${id}`, storageClass: `adm-sa-${id}`, node: `adm-sa-${id}` };
const admin = new KubeClient(newKubeConfig());
let rbac: ComponentRbac;
let kube: KubeClient;
let ns = '';
let requests: ApiRequest[] = [];

const apply = (yaml: string): Promise<void> => applyYaml(yaml, 'admission-sa-test');

beforeAll(async () => {
  rbac = await loadComponentRbac('admission');
  await Promise.all([applyComponentRbac(rbac), installDeckhouseCrds()]);
  kube = serviceAccountClient(rbac, { requestTimeoutMs: 10_000 });
  ns = await freshNamespace('adm-sa');
  await apply(`apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineClass
metadata: {name: ${names.vmClass}}
spec: {cpu: {type: Model, model: Nehalem}}
---
apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachine
metadata: {name: vm1, namespace: ${ns}}
spec:
  virtualMachineClassName: ${names.vmClass}
  cpu: {cores: 1}
  memory: {size: 1Gi}
  blockDeviceRefs: [{kind: VirtualDisk, name: data}]
---
apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualDisk
metadata: {name: data, namespace: ${ns}}
spec: {}
---
apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineBlockDeviceAttachment
metadata: {name: attach-data, namespace: ${ns}}
spec: {blockDeviceRef: {kind: VirtualDisk, name: data}, virtualMachineName: vm1}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ${names.storageClass}}
provisioner: example.com/test
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc1, namespace: ${ns}}
spec: {accessModes: [ReadWriteOnce], storageClassName: ${names.storageClass}, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Node
metadata: {name: ${names.node}}
`);
});

afterAll(async () => {
  kube.close();
  admin.close();
  await kubectl(['delete', 'node', names.node, '--ignore-not-found']);
});

/** Every lookup of the interface (the mapped type makes a new one a compile error here until added). */
function everyLookup(): { [K in keyof Lookups]: (l: Lookups) => Promise<unknown> } {
  return {
    virtualMachineClass: (l) => l.virtualMachineClass(names.vmClass),
    virtualMachineClasses: (l) => l.virtualMachineClasses(),
    moduleSettings: (l) => l.moduleSettings(),
    virtualMachine: (l) => l.virtualMachine(ns, 'vm1'),
    virtualMachines: (l) => l.virtualMachines(ns),
    virtualMachineIPAddress: (l) => l.virtualMachineIPAddress(ns, 'vm1'),
    ipAddressLease: (l) => l.ipAddressLease('ip-10-66-0-1'),
    ipAddressLeases: (l) => l.ipAddressLeases(),
    attachments: (l) => l.attachments(ns),
    operations: (l) => l.operations(ns),
    virtualDisk: (l) => l.virtualDisk(ns, 'data'),
    virtualImage: (l) => l.virtualImage(ns, 'ubuntu'),
    clusterVirtualImage: (l) => l.clusterVirtualImage(`adm-sa-${id}`),
    virtualMachinePool: (l) => l.virtualMachinePool(ns, 'pool'),
    usbDevice: (l) => l.usbDevice(ns, 'usb'),
    storageClass: (l) => l.storageClass(names.storageClass),
    storageClasses: (l) => l.storageClasses(),
    persistentVolumeClaim: (l) => l.persistentVolumeClaim(ns, 'pvc1'),
    node: (l) => l.node(names.node),
    nodes: (l) => l.nodes(),
    networkExists: (l) => Promise.all([l.networkExists('Network', ns, 'net'), l.networkExists('ClusterNetwork', ns, 'cnet')]),
    systemNetwork: (l) => l.systemNetwork('sys'),
    apiAvailable: (l) => l.apiAvailable('virtualization.deckhouse.io', 'v1alpha2', 'virtualmachines'),
    serverVersion: (l) => l.serverVersion(),
  };
}

describe('the admission lookups with only the admission ServiceAccount rights', () => {
  it('act as the admission ServiceAccount', async () => {
    const me = await whoAmI(kube);
    expect(me.username).toBe('system:serviceaccount:d8-virtualization:admission');
    expect(me.groups).toEqual(expect.arrayContaining([...rbac.groups]));
  });

  it('answer every lookup from the apiserver, which refuses none of their requests', async () => {
    const since = Date.now();
    const lookups = new KubeLookups(kube, new LookupCache({ ttlMs: 0, maxEntries: 100 }));
    const answers = Object.fromEntries(
      await Promise.all(Object.entries(everyLookup()).map(async ([name, run]) => [name, await run(lookups)] as const)),
    ) as Record<keyof Lookups, unknown>;

    expect(answers.virtualMachineClass).toMatchObject({ metadata: { name: names.vmClass } });
    expect(answers.virtualMachine).toMatchObject({ metadata: { name: 'vm1', namespace: ns } });
    expect(answers.virtualDisk).toMatchObject({ metadata: { name: 'data' } });
    expect(answers.attachments).toEqual([expect.objectContaining({ metadata: expect.objectContaining({ name: 'attach-data' }) as unknown })]);
    expect(answers.persistentVolumeClaim).toEqual({ storageClassName: names.storageClass, size: '1Gi', accessModes: ['ReadWriteOnce'] });
    expect(answers.storageClass).toEqual({ name: names.storageClass, provisioner: 'example.com/test', isDefault: false });
    expect(answers.node).toMatchObject({ name: names.node });
    expect(answers.networkExists).toEqual([false, false]);
    expect(answers.apiAvailable).toBe(true);

    const seen = await requestsMadeBy(kube, rbac, since);
    requests = seen.map((s) => s.request);
    expect(requests.length).toBeGreaterThanOrEqual(20);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
  });

  itNeedsEveryRuleAndNothingMore('the lookups do', () => ({ admin, rbac, requests }));
});
