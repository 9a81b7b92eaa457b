import { fileURLToPath } from 'node:url';
import { kubectl, type KubectlOptions } from '../../env/index.js';
import { KNATIVE_DIR } from './manifests.js';

/** Minimal Knative Serving and Eventing CRDs (see knative-crds/README.md). */
export const KNATIVE_TEST_CRDS = fileURLToPath(new URL('./knative-crds/', import.meta.url));

async function run(args: string[], opts?: KubectlOptions): Promise<string> {
  const res = await kubectl(args, opts);
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${res.stderr}`);
  return res.stdout;
}

/** Apply a directory of CRDs (kustomize) server-side and wait until they are Established. */
export async function installCrds(dir: string, opts?: KubectlOptions): Promise<void> {
  const names = await run(['apply', '--server-side', '--field-manager=install-test', '-k', dir, '-o', 'name'], opts);
  await run(['wait', '--for=condition=Established', '--timeout=60s', ...names.trim().split('\n')], opts);
}

/** What an apiserver needs before the install can be applied to it: Knative's CRDs, the module's
 *  CRDs (knative/crds) and the module namespace. */
export async function prepareApiServer(opts?: KubectlOptions): Promise<void> {
  await installCrds(KNATIVE_TEST_CRDS, opts);
  await installCrds(`${KNATIVE_DIR}crds`, opts);
  await run(['apply', '--server-side', '--field-manager=install-test', '-f', `${KNATIVE_DIR}namespace.yaml`], opts);
}

/** The CRD of KubeVirt's configuration object, which the install's second step applies. */
export const KUBEVIRT_CONFIG_CRD = 'customresourcedefinition/internalvirtualizationkubevirts.internal.virtualization.deckhouse.io';

/**
 * The install as the README says: `kubectl apply -k knative/`, then, once KubeVirt's CRD is
 * Established, KubeVirt's configuration object (`-k knative/kubevirt/config`), server-side.
 */
export async function applyInstall(opts: KubectlOptions, flags: readonly string[] = ['--field-manager=virtualization-install']): Promise<void> {
  await run(['apply', '--server-side', ...flags, '-k', KNATIVE_DIR], opts);
  await run(['wait', '--for=condition=Established', '--timeout=60s', KUBEVIRT_CONFIG_CRD], opts);
  await run(['apply', '--server-side', ...flags, '-k', `${KNATIVE_DIR}kubevirt/config`], opts);
}

export { run as kubectlOk };
