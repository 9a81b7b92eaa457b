/**
 * KubeVirt's configuration losing virt-controller's `evacuation-controller-threads: '0'` (KubeVirt's
 * own evacuation would then migrate an evacuated VM beside our Evict operation): every VM says so
 * (KubeVirtReady=False, KubeVirtConfigurationIncomplete, naming the flag) while it keeps running, and
 * the install reconcile (KUBEVIRT_CONFIG_REPAIR) puts the flag back with one conditional merge patch
 * that keeps every other flag; the condition goes. The configuration object lives in a namespace of
 * its own here; KubeVirt is the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InternalKubeVirtSchema, internalKubeVirt, type InternalKubeVirt } from '../../../shared/api/internal/resources.js';
import { KUBEVIRT_CONFIG_NAME } from '../../../shared/api/internal/kubevirt-required.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { descriptorOf, type ResourceClient } from '../../../shared/kube/index.js';
import { kubeVirtConfig } from '../../../platform/kubevirt.js';
import { freshNamespace } from '../../env/index.js';
import { eventually, mainKube, startTestController, TEST_FIELD_MANAGER, type TestController } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const FLAG = 'evacuation-controller-threads';
const env: Record<string, string> = { KUBEVIRT_CONFIG_REPAIR: 'false' };
const kube = mainKube();
const configs: ResourceClient<InternalKubeVirt> = kube.resource(descriptorOf(internalKubeVirt), InternalKubeVirtSchema, TEST_FIELD_MANAGER);
let ref = { namespace: '', name: KUBEVIRT_CONFIG_NAME };
let repairing: TestController | undefined;

type Flags = Record<string, string>;
const controllerFlags = (kv: InternalKubeVirt): Flags =>
  (kv.spec as { customizeComponents?: { flags?: { controller?: Flags } } }).customizeComponents?.flags?.controller ?? {};

// Before the world's controller starts: the configuration object it watches, as the install ships it less the flag.
beforeAll(async () => {
  const namespace = await freshNamespace('ctl-kvcfg-kv');
  env['KUBEVIRT_CONFIG_NAMESPACE'] = namespace;
  ref = { namespace, name: KUBEVIRT_CONFIG_NAME };
  const doc = kubeVirtConfig() as unknown as InternalKubeVirt & { spec: { customizeComponents: { flags: { controller: Flags } } } };
  delete doc.spec.customizeComponents.flags.controller[FLAG];
  await configs.create({ ...doc, metadata: { name: KUBEVIRT_CONFIG_NAME, namespace } });
});
const t = useWorld('ctl-kvcfg', { env });
afterAll(async () => {
  await repairing?.stop();
  kube.close();
});

const kubevirtReady = (v: VirtualMachine) => v.status?.conditions?.find((c) => c.type === 'KubeVirtReady');

describe('the evacuation flag of KubeVirt’s configuration', () => {
  it('missing: the VM runs and says KubeVirt’s own evacuation is on; the repair puts the flag back, keeping the other flags, and the condition goes', async () => {
    await t.w.createVM('web');
    const v = await t.w.vmWhen(
      'web',
      (x) => phaseIs('Running')(x) && kubevirtReady(x)?.reason === 'KubeVirtConfigurationIncomplete',
      'Running, configuration incomplete',
    );
    expect(kubevirtReady(v)).toMatchObject({
      status: 'False',
      message: `KubeVirt's configuration (InternalVirtualizationKubeVirt ${ref.namespace}/config) lacks virt-controller flag ${FLAG}: '0' (KubeVirt's own evacuation off): KubeVirt's own evacuation would migrate this VM beside the module's until it is restored`,
    });
    // Repair off: nothing was written.
    expect(controllerFlags(await configs.get(ref))[FLAG]).toBeUndefined();

    // A controller with the install reconcile on puts it back; the world's own (repair off) goes first.
    await t.w.ctl.stop();
    repairing = await startTestController(kube, t.w.scope, { ...env, KUBEVIRT_CONFIG_REPAIR: 'true' });
    const flags = await eventually(async () => {
      const f = controllerFlags(await configs.get(ref));
      return f[FLAG] === '0' ? f : undefined;
    }, 'the flag back');
    expect(flags['kubeconfig']).toBe('/kubeconfig.local/kubeconfig');
    await t.w.vmWhen('web', (x) => kubevirtReady(x) === undefined, 'KubeVirtReady gone');
  });

  it('set to another value by hand: put back to 0; a flags map of the wrong type is refused by the apiserver', async () => {
    await configs.mergePatch(ref, { spec: { customizeComponents: { flags: { controller: { [FLAG]: '4', 'extra-flag': 'kept' } } } } });
    await eventually(async () => controllerFlags(await configs.get(ref))[FLAG] === '0', 'the flag back to 0');
    expect(controllerFlags(await configs.get(ref))['extra-flag']).toBe('kept');
    await expect(configs.mergePatch(ref, { spec: { customizeComponents: { flags: { controller: 'threads=0' } } } })).rejects.toThrow(/flags\.controller/);
  });
});
