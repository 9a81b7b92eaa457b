import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { kubectl, startExtraApiServer, type ExtraApiServer, type KubectlOptions } from '../../env/index.js';
import { kubectlOk, prepareApiServer } from './knative-crds.js';
import { KNATIVE_DIR } from './manifests.js';
import { objectKey } from '../../../shared/kube/index.js';

// A real apply installs webhook configurations that would intercept every VirtualMachine write of
// the shared test apiserver; this test therefore runs against an apiserver of its own, on the same
// etcd under a separate key prefix.
let extra: ExtraApiServer;
let opts: KubectlOptions;

const SERVER_SIDE = ['--server-side', '--field-manager=virtualization-install'];
const apply = (flags: string[]): Promise<string> => kubectlOk(['apply', ...flags, '-k', KNATIVE_DIR], opts);

async function resourceVersions(): Promise<Map<string, string>> {
  const list = JSON.parse(await kubectlOk(['get', '-k', KNATIVE_DIR, '-o', 'json'], opts)) as {
    items: Array<{ kind: string; metadata: { namespace?: string; name: string; resourceVersion: string } }>;
  };
  return new Map(list.items.map((o) => [`${o.kind}/${objectKey({ namespace: o.metadata.namespace, name: o.metadata.name })}`, o.metadata.resourceVersion]));
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
  it('server-side changes nothing the second time: every object keeps its resourceVersion and kubectl diff is empty', async () => {
    await apply(SERVER_SIDE);
    const first = await resourceVersions();
    await apply(SERVER_SIDE);
    expect(await resourceVersions()).toEqual(first);
    const diff = await kubectl(['diff', ...SERVER_SIDE, '-k', KNATIVE_DIR], opts);
    expect(diff).toMatchObject({ code: 0, stdout: '' });
  }, 120_000);

  it('with plain `kubectl apply -k knative/` is refused, naming a KubeVirt CRD too large for the last-applied annotation: the install is server-side only', async () => {
    const res = await kubectl(['apply', '-k', KNATIVE_DIR], opts);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(
      /CustomResourceDefinition\.apiextensions\.k8s\.io "internalvirtualization\w+\.[a-z.]*internal\.virtualization\.deckhouse\.io" is invalid: metadata\.annotations: Too long/,
    );
  }, 120_000);
});
