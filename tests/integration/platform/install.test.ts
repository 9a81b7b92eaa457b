/**
 * `npm start`'s install (platform/install.ts) on an apiserver of its own: KubeVirt's configuration
 * object is never applied twice. Beside real virt-controller it lives in KubeVirt's namespace only
 * (platform/kubevirt.ts applies it there): with the install's copy too, virt-controller saw two
 * KubeVirt objects and its migration controller failed every sync, so a Migrate stayed Pending for
 * good whenever the install's discovery happened to run after its CRDs were served (issue 31).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { applyCrds, applyInstall, KUBEVIRT_CONFIG_ELSEWHERE, kubectlFor, type Kubectl } from '../../../platform/install.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { getTestEnv, startExtraApiServer, type ExtraApiServer } from '../../env/index.js';

const KUBEVIRTS = 'internalvirtualizationkubevirts.internal.virtualization.deckhouse.io';

let extra: ExtraApiServer;
let kubectl: Kubectl;
let admin: KubeClient;

beforeAll(async () => {
  // The install's webhook configurations would intercept the shared apiserver's writes: an apiserver of its own.
  extra = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/platform-install-${randomBytes(4).toString('hex')}`] });
  kubectl = kubectlFor(getTestEnv().binDir, extra.kubeconfigPath);
  admin = new KubeClient(extra.kubeConfig());
  // The race's losing order, made certain: the CRDs are served before the install looks.
  await applyCrds(kubectl);
}, 180_000);

afterAll(async () => {
  admin?.close();
  await extra?.stop();
});

const kubeVirtObjects = async (): Promise<string[]> =>
  (await kubectl(['get', KUBEVIRTS, '-A', '-o', 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}']))
    .split('\n')
    .filter((l) => l !== '');

describe("npm start's install", () => {
  it("leaves KubeVirt's configuration to KubeVirt's namespace beside real virt-controller, and says so, even when its CRD is already served", async () => {
    const report = await applyInstall(kubectl, admin, { crdsServed: Promise.resolve(), kubeVirtConfiguration: 'elsewhere' });
    expect(await kubeVirtObjects()).toEqual([]);
    expect(report.skipped).toContainEqual({
      what: 'internal.virtualization.deckhouse.io/v1 InternalVirtualizationKubeVirt',
      count: 1,
      why: KUBEVIRT_CONFIG_ELSEWHERE,
    });
  }, 180_000);

  it("applies the install's KubeVirt configuration (the simulated KubeVirt) only once its CRD is served, whatever discovery saw", async () => {
    let served = false;
    const crdsServed = new Promise<void>((resolve) => setTimeout(() => ((served = true), resolve()), 200));
    const report = await applyInstall(kubectl, admin, { crdsServed, kubeVirtConfiguration: 'install' });
    expect(served).toBe(true);
    expect(await kubeVirtObjects()).toEqual(['d8-virtualization/config']);
    expect(report.skipped.map((s) => s.what)).not.toContain('internal.virtualization.deckhouse.io/v1 InternalVirtualizationKubeVirt');
  }, 180_000);
});
