/**
 * Our units' own identities, as in a cluster: a token of the unit's ServiceAccount from the
 * TokenRequest API (one hour), written to a file that a refresh loop renews every ten minutes, as
 * kubelet renews a projected token long before it expires, and a kubeconfig that reads that file (the
 * client re-reads it every minute, as it does in-cluster). Never admin credentials.
 */
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeClient } from '../shared/kube/index.js';
import { errorMessage } from '../shared/errors/index.js';

export const MODULE_NAMESPACE = 'd8-virtualization';
const TOKEN_SECONDS = 3600;
const REFRESH_MS = 10 * 60_000;

/** The user name the apiserver gives a ServiceAccount token. */
export const serviceAccountUser = (sa: string, namespace = MODULE_NAMESPACE): string => `system:serviceaccount:${namespace}:${sa}`;

/** How the units reach the apiserver: the admin kubeconfig's cluster entry, without its user. */
function clusterEntry(admin: KubeConfig): string {
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster');
  const lines = [`    server: "${cluster.server}"`];
  if (cluster.caData) lines.push(`    certificate-authority-data: "${cluster.caData}"`);
  else if (cluster.caFile) lines.push(`    certificate-authority: "${cluster.caFile}"`);
  if (cluster.skipTLSVerify) lines.push('    insecure-skip-tls-verify: true');
  if (cluster.tlsServerName) lines.push(`    tls-server-name: "${cluster.tlsServerName}"`);
  return lines.join('\n');
}

export class ServiceAccountTokens {
  private readonly issued = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly admin: KubeClient,
    private readonly dir: string,
    private readonly warn: (message: string) => void,
    private readonly namespace = MODULE_NAMESPACE,
  ) {}

  /** A kubeconfig acting as ServiceAccount `sa` of the module namespace (the token is requested now). */
  async kubeconfigFor(sa: string): Promise<string> {
    await this.writeToken(sa);
    this.issued.add(sa);
    const path = join(this.dir, `sa-${sa}.kubeconfig`);
    await writeFile(
      path,
      `apiVersion: v1
kind: Config
clusters:
- name: cluster
  cluster:
${clusterEntry(this.admin.kubeConfig)}
users:
- name: ${serviceAccountUser(sa, this.namespace)}
  user:
    # Re-read by client-node's KubeConfig (every 60 s), as a rotated token file.
    auth-provider: {name: tokenFile, config: {tokenFile: "${this.tokenPath(sa)}"}}
contexts: [{name: ${sa}, context: {cluster: cluster, user: "${serviceAccountUser(sa, this.namespace)}", namespace: ${this.namespace}}}]
current-context: ${sa}
`,
    );
    if (this.timer === undefined) {
      this.timer = setInterval(() => void this.refreshAll(), REFRESH_MS);
      this.timer.unref();
    }
    return path;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tokenPath(sa: string): string {
    return join(this.dir, `sa-${sa}.token`);
  }

  /** A fresh token of ServiceAccount `sa` of the module namespace (one hour), e.g. for a sender's `Authorization: Bearer`. */
  async token(sa: string): Promise<string> {
    const res = (await this.admin.rest.request({
      method: 'POST',
      path: `/api/v1/namespaces/${this.namespace}/serviceaccounts/${sa}/token`,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: TOKEN_SECONDS } },
      what: `request a token for ServiceAccount ${this.namespace}/${sa}`,
    })) as { status?: { token?: string } };
    const token = res.status?.token;
    if (token === undefined || token === '') throw new Error(`the TokenRequest for ${this.namespace}/${sa} returned no token`);
    return token;
  }

  private async writeToken(sa: string): Promise<void> {
    const token = await this.token(sa);
    const path = this.tokenPath(sa);
    await writeFile(`${path}.tmp`, token, { mode: 0o600 });
    await rename(`${path}.tmp`, path);
  }

  private async refreshAll(): Promise<void> {
    for (const sa of this.issued) {
      await this.writeToken(sa).catch((err: unknown) =>
        this.warn(`the token of ServiceAccount ${sa} was not renewed (${errorMessage(err)}); trying again in ten minutes`),
      );
    }
  }
}
