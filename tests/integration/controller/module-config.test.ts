import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import { KubeClient } from '../../../shared/kube/index.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { installDeckhouseCrds, kubectl, startExtraApiServer, type ExtraApiServer } from '../../env/index.js';
import { createDvcrDeployment, deploymentsClient, gcCondition, runEnds } from './dvcr-gc-fixtures.js';
import { eventually, readWhen, startTestController, testClients, type TestController } from './fixtures.js';

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

describe('DVCR garbage collection on the ModuleConfig schedule', () => {
  it('a dvcr.gc.schedule set in the ModuleConfig starts runs at its times (every minute here)', async () => {
    await ctl?.stop();
    // DVCR: a registry with nothing in it (the runs' deleting is tested in disks/dvcr-gc.test.ts).
    const registry = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.startsWith('/v2/_catalog') === true ? '{"repositories":[]}' : '{}');
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    try {
      const deployments = deploymentsClient(kube);
      await createDvcrDeployment(deployments, NS);
      ctl = await startTestController(
        kube,
        { namespace: NS, id: 'mc-gc' },
        {
          MODULE_CONFIG_WATCH: 'true',
          STORAGE_RECONCILERS: 'true',
          POD_NAMESPACE: NS,
          DVCR_ADDRESS: `127.0.0.1:${String((registry.address() as AddressInfo).port)}`,
          DVCR_PLAIN_HTTP: 'true',
        },
      );
      const mc = await c.moduleConfigs.get({ name: 'virtualization' });
      const settings = {
        ...mc.spec?.settings,
        dvcr: { storage: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { size: '1Gi' } }, gc: { schedule: '* * * * *' } },
      };
      await c.moduleConfigs.mergePatch({ name: 'virtualization' }, { spec: { settings } });
      await readWhen(
        () => deployments.get({ namespace: NS, name: 'dvcr' }),
        (d) => gcCondition(d) !== undefined,
        'a run started by the schedule',
        130_000,
      );
      expect(await runEnds(c, deployments, NS, 'Completed', 60_000)).toMatch(/Deleted 0 image\(s\)/);
    } finally {
      await new Promise((resolve) => registry.close(resolve));
    }
  }, 240_000);
});
