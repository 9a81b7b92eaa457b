/**
 * What the /metrics guard tests need from the test cluster: the install's scraper role applied from
 * knative/ (not copied), real ServiceAccount tokens from the TokenRequest API, and kubeconfigs
 * (impersonating a ServiceAccount, or pointing at a port where nothing listens).
 */
import { randomBytes } from 'node:crypto';
import { waitFor } from '../../../shared/testing/wait.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../../shared/kube/index.js';
import { freePort, getTestEnv, kubectl } from '../../env/index.js';
import { KNATIVE_DIR, readManifests, type Manifest } from '../install/manifests.js';

export const MODULE_NAMESPACE = 'd8-virtualization';
/** The scrapers' identity of the install (knative/monitoring/scraper.yaml). */
export const SCRAPER = { namespace: MODULE_NAMESPACE, name: 'metrics-scraper' };

async function apply(objects: readonly Manifest[]): Promise<void> {
  const stdin = objects.map((o) => JSON.stringify(o)).join('\n---\n');
  const res = await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=metrics-auth-test', '-f', '-'], { stdin });
  if (res.code !== 0) throw new Error(`kubectl apply failed: ${res.stderr}`);
}

/** Apply objects of a file under knative/ as they are (all, or those `pick` keeps). */
export async function applyFromKnative(file: string, pick: (m: Manifest) => boolean = () => true): Promise<Manifest[]> {
  const objects = (await readManifests(`${KNATIVE_DIR}${file}`)).filter(pick);
  await apply(objects);
  return objects;
}

/** The module namespace and the scraper ClusterRole, ServiceAccount and binding of the install;
 *  resolves once the apiserver lets the scraper `get /metrics` (RBAC is seen with a short delay). */
export async function applyScraperRole(): Promise<void> {
  await applyFromKnative('namespace.yaml');
  await applyFromKnative('monitoring/scraper.yaml');
  await waitFor('the scraper to be allowed get /metrics', async () => {
    const res = await kubectl(['auth', 'can-i', 'get', '/metrics'], { asUser: `system:serviceaccount:${SCRAPER.namespace}:${SCRAPER.name}` });
    return res.stdout.trim() === 'yes';
  });
}

/** A ServiceAccount that no role is bound to. */
export async function createServiceAccount(admin: KubeClient, namespace: string, name: string): Promise<void> {
  await admin.rest.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
    what: `create ServiceAccount ${namespace}/${name}`,
  });
}

/** A real token of the ServiceAccount (TokenRequest API, 10 minutes unless said), for `audiences` or the apiserver's own. */
export async function serviceAccountToken(
  admin: KubeClient,
  namespace: string,
  name: string,
  o: { readonly audiences?: readonly string[]; readonly expirationSeconds?: number } = {},
): Promise<string> {
  const res = (await admin.rest.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: o.expirationSeconds ?? 600, ...(o.audiences === undefined ? {} : { audiences: o.audiences }) },
    },
    what: `request a token of ${namespace}/${name}`,
  })) as { status?: { token?: string } };
  const token = res.status?.token;
  if (!token) throw new Error(`no token for ${namespace}/${name}`);
  return token;
}

/** A kubeconfig file whose server is a loopback port where nothing listens. */
export async function unreachableKubeconfig(): Promise<string> {
  const dir = join(getTestEnv().workDir, 'metrics-auth');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `unreachable-${randomBytes(3).toString('hex')}.kubeconfig`);
  const port = await freePort();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'gone', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'unused' }],
    contexts: [{ name: 'gone', cluster: 'gone', user: 'u' }],
    currentContext: 'gone',
  });
  await writeFile(path, kc.exportConfig());
  return path;
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export async function get(url: string, token?: string): Promise<Answer> {
  const res = await fetch(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
