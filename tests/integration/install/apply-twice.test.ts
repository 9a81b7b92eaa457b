import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { kubectl, startExtraApiServer, type ExtraApiServer, type KubectlOptions } from '../../env/index.js';
import { applyInstall, kubectlOk, prepareApiServer } from './knative-crds.js';
import { KNATIVE_DIR } from './manifests.js';
import { objectKey } from '../../../shared/kube/index.js';

// A real apply installs webhook configurations that would intercept every VirtualMachine write of
// the shared test apiserver; this test therefore runs against an apiserver of its own, on the same
// etcd under a separate key prefix.
let extra: ExtraApiServer;
let opts: KubectlOptions;

const SERVER_SIDE = ['--server-side', '--field-manager=virtualization-install'];
const KUBEVIRT_CONFIG_DIR = `${KNATIVE_DIR}kubevirt/config`;

interface Resource {
  kind: string;
  metadata: { namespace?: string; name: string; resourceVersion: string };
}

async function resourceVersions(): Promise<Map<string, string>> {
  const items: Resource[] = [];
  for (const dir of [KNATIVE_DIR, KUBEVIRT_CONFIG_DIR]) {
    // One object (knative/kubevirt/config) comes back as itself, several as a List.
    const got = JSON.parse(await kubectlOk(['get', '-k', dir, '-o', 'json'], opts)) as Resource & { items?: Resource[] };
    items.push(...(got.items ?? [got]));
  }
  return new Map(items.map((o) => [`${o.kind}/${objectKey({ namespace: o.metadata.namespace, name: o.metadata.name })}`, o.metadata.resourceVersion]));
}

beforeAll(async () => {
  extra = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/install-${randomBytes(4).toString('hex')}`] });
  opts = { kubeconfigPath: extra.kubeconfigPath };
  await prepareApiServer(opts);
}, 120_000);

afterAll(async () => {
  await extra.stop();
});

describe('applying the install twice', () => {
  it("server-side (the install, then KubeVirt's configuration object) changes nothing the second time: every object keeps its resourceVersion and kubectl diff is empty", async () => {
    await applyInstall(opts);
    const first = await resourceVersions();
    expect(first.has('InternalVirtualizationKubeVirt/d8-virtualization/config')).toBe(true);
    await applyInstall(opts);
    expect(await resourceVersions()).toEqual(first);
    for (const dir of [KNATIVE_DIR, KUBEVIRT_CONFIG_DIR]) {
      expect(await kubectl(['diff', ...SERVER_SIDE, '-k', dir], opts)).toMatchObject({ code: 0, stdout: '' });
    }
  }, 120_000);

  it('with plain `kubectl apply -k knative/` is refused, naming a KubeVirt CRD too large for the last-applied annotation: the install is server-side only', async () => {
    const res = await kubectl(['apply', '-k', KNATIVE_DIR], opts);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(
      /CustomResourceDefinition\.apiextensions\.k8s\.io "internalvirtualization\w+\.[a-z.]*internal\.virtualization\.deckhouse\.io" is invalid: metadata\.annotations: Too long/,
    );
  }, 120_000);
});
