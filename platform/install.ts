/**
 * The install (`knative/`) on the local cluster, as far as a cluster without Knative can hold it:
 * the CRDs (and Deckhouse's ModuleConfig CRD from knative/standalone) first, then every other object
 * whose API the apiserver serves — namespace, roles, component RBAC, webhook configurations, plain
 * Services. Knative Services and eventing are left out (our functions run as local processes
 * instead), and so are the install's own workloads (the controller Deployment): their pods would only
 * pretend to run on simulated nodes while the real units run locally.
 */
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import type { KubeClient } from '../shared/kube/index.js';
import { runKubectl, type KubectlOptions } from '../tests/env/kubectl.js';

export const KNATIVE_DIR = fileURLToPath(new URL('../knative/', import.meta.url));
const FIELD_MANAGER = 'virtualization-install';
/** Workloads of the install whose units the platform runs as local processes. */
const RUN_LOCALLY = new Set(['apps/v1/Deployment', 'apps/v1/DaemonSet', 'batch/v1/Job']);

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

export interface Kubectl {
  (args: string[], stdin?: string): Promise<string>;
}

/**
 * The version-matched kubectl of the binary cache, against `kubeconfigPath` (with `globalArgs` before
 * every command, e.g. `--as=alice`); a failure throws with its stderr.
 */
export function kubectlFor(binDir: string, kubeconfigPath: string, globalArgs: readonly string[] = []): Kubectl {
  return async (args, stdin) => {
    const opts: KubectlOptions = { timeoutMs: 120_000, ...(stdin !== undefined ? { stdin } : {}) };
    const res = await runKubectl({ binDir, kubeconfigPath }, [...globalArgs, ...args], opts);
    if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${res.stderr.trim()}`);
    return res.stdout;
  };
}

export interface InstallReport {
  applied: number;
  /** `apiVersion kind` → how many were left out, and why. */
  skipped: { what: string; count: number; why: string }[];
}

/** Apply the CRDs of the install and of Deckhouse's ModuleConfig, and wait until they are served. */
export async function applyCrds(kubectl: Kubectl): Promise<void> {
  const names: string[] = [];
  for (const dir of [`${KNATIVE_DIR}crds`, `${KNATIVE_DIR}standalone`]) {
    const out = await kubectl(['apply', '--server-side', '--force-conflicts', `--field-manager=${FIELD_MANAGER}`, '-k', dir, '-o', 'name']);
    names.push(
      ...out
        .trim()
        .split('\n')
        .filter((n) => n !== ''),
    );
  }
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...names]);
}

/** The kinds each apiVersion serves, read from discovery. */
async function servedKinds(kube: KubeClient, apiVersions: readonly string[]): Promise<Set<string>> {
  const served = new Set<string>();
  for (const gv of apiVersions) {
    const path = gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`;
    const list = (await kube.rest.request({ method: 'GET', path, what: `discover ${gv}` }).catch(() => undefined)) as
      { resources?: { kind: string; name: string }[] } | undefined;
    for (const r of list?.resources ?? []) if (!r.name.includes('/')) served.add(`${gv}/${r.kind}`);
  }
  return served;
}

/** KubeVirt's configuration object (the KubeVirt CR, renamed): an object of one of the install's own CRDs. */
const KUBEVIRT_CONFIG_KIND = 'InternalVirtualizationKubeVirt';
/** Why the install's KubeVirt configuration is left out beside real virt-controller. */
export const KUBEVIRT_CONFIG_ELSEWHERE =
  "KubeVirt's configuration is applied in KubeVirt's own namespace beside real virt-controller (platform/kubevirt.ts); a second one would stop every migration";

export interface InstallOptions {
  /** Resolves once the install's CRDs are served (`applyCrds`): discovery is read after it. */
  readonly crdsServed: Promise<void>;
  /**
   * Where KubeVirt's configuration object goes: `install` as the install has it (the simulated
   * KubeVirt), `elsewhere` not from here (real virt-controller: platform/kubevirt.ts applies it in
   * KubeVirt's namespace). virt-controller reads every KubeVirt object it sees, and with two its
   * migration controller fails every sync ("more than one KubeVirt custom resource detected"): a
   * migration stays Pending for good (issue 31).
   */
  readonly kubeVirtConfiguration: 'install' | 'elsewhere';
}

/** Everything else of the install that this cluster can hold (see the file comment), server-side applied. */
export async function applyInstall(kubectl: Kubectl, admin: KubeClient, o: InstallOptions): Promise<InstallReport> {
  // js-yaml, not the client library's loader: that one maps objects onto its models, renaming fields
  // such as a NetworkPolicy rule's `from` (to `_from`).
  const all: Manifest[] = [];
  for (const dir of [KNATIVE_DIR, `${KNATIVE_DIR}kubevirt/config`]) {
    all.push(...(loadAll(await kubectl(['kustomize', dir])) as Array<Manifest | null>).filter((m): m is Manifest => m !== null));
  }
  const rest = all.filter((m) => m.kind !== 'CustomResourceDefinition');
  // Discovery is read once the install's own CRDs are served: an object of one of them is never left
  // out (or, beside real virt-controller, put in twice) by a race against their registration.
  await o.crdsServed;
  const served = await servedKinds(admin, [...new Set(rest.map((m) => m.apiVersion))]);
  const apply: Manifest[] = [];
  const skipped = new Map<string, { count: number; why: string }>();
  const skip = (m: Manifest, why: string): void => {
    const key = `${m.apiVersion} ${m.kind}`;
    skipped.set(key, { count: (skipped.get(key)?.count ?? 0) + 1, why });
  };
  for (const m of rest) {
    const gvk = `${m.apiVersion}/${m.kind}`;
    if (m.kind === KUBEVIRT_CONFIG_KIND && o.kubeVirtConfiguration === 'elsewhere') skip(m, KUBEVIRT_CONFIG_ELSEWHERE);
    else if (RUN_LOCALLY.has(gvk)) skip(m, 'its unit runs as a local process');
    else if (!served.has(gvk)) skip(m, 'this cluster does not serve the API (no Knative or monitoring stack locally)');
    else apply.push(m);
  }
  await kubectl(
    ['apply', '--server-side', '--force-conflicts', `--field-manager=${FIELD_MANAGER}`, '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: apply }),
  );
  return { applied: apply.length, skipped: [...skipped].map(([what, v]) => ({ what, ...v })) };
}
