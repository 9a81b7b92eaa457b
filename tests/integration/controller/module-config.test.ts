import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import { KubeClient } from '../../../shared/kube/index.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { installDeckhouseCrds, kubectl, startExtraApiServer, type ExtraApiServer } from '../../env/index.js';
import { eventually, startTestController, testClients, type TestController } from './fixtures.js';

// A cluster of its own (an extra apiserver on a separate etcd prefix): the `virtualization`
// ModuleConfig is cluster-wide and must meet no other test.
let apiserver: ExtraApiServer;
let kube: KubeClient;
let c: Clients;
let ctl: TestController | undefined;
const NS = 'ctl-module-config';

async function ok(args: string[], stdin?: string): Promise<void> {
  const res = await kubectl(args, { kubeconfigPath: apiserver.kubeconfigPath, ...(stdin === undefined ? {} : { stdin }) });
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
}

beforeAll(async () => {
  apiserver = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/controller-mc-${randomBytes(3).toString('hex')}`] });
  await ok(['apply', '--server-side', '--field-manager=controller-test', '-k', join(import.meta.dirname, '..', '..', '..', 'knative', 'crds')]);
  await installDeckhouseCrds(apiserver.kubeconfigPath);
  await ok(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  await ok(['create', 'namespace', NS]);
  kube = new KubeClient(apiserver.kubeConfig());
  c = testClients(kube);
}, 90_000);
afterAll(async () => {
  await ctl?.stop();
  kube.close();
  await apiserver.stop();
});

describe('virtualMachineCIDRs from the ModuleConfig', () => {
  it('are read from ModuleConfig virtualization, and a change binds addresses that waited', async () => {
    ctl = await startTestController(kube, { namespace: NS, id: 'mc' }, { MODULE_CONFIG_WATCH: 'true', VIRTUAL_MACHINE_CIDRS: '' });
    await c.vmips.create({ apiVersion: API_VERSION, kind: 'VirtualMachineIPAddress', metadata: { name: 'waiting', namespace: NS }, spec: { type: 'Auto' } });
    await eventually(
      async () => (await c.vmips.get({ namespace: NS, name: 'waiting' })).status?.conditions?.[0]?.reason === 'VirtualMachineIPAddressLeaseNotReady',
      'IPAM off',
    );
    await c.moduleConfigs.create({
      apiVersion: 'deckhouse.io/v1alpha1',
      kind: 'ModuleConfig',
      metadata: { name: 'virtualization' },
      spec: { enabled: true, version: 1, settings: { virtualMachineCIDRs: ['10.207.5.0/24'] } },
    });
    const ip = await eventually(async () => {
      const got = await c.vmips.get({ namespace: NS, name: 'waiting' });
      return got.status?.phase === 'Bound' && got;
    }, 'Bound from the ModuleConfig CIDRs');
    expect(ip.status?.address).toBe('10.207.5.1');
  });
});
