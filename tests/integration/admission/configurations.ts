/**
 * The install's webhook configurations (knative/webhooks/), pointed at the in-process function: each
 * webhook's service reference becomes `https://127.0.0.1:<port><path>` with the test CA, and every
 * webhook is limited to objects labelled for this test (namespaced resources by their namespace's
 * label, cluster-scoped ones by their own).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AdmissionCluster } from './cluster.js';

const WEBHOOKS_DIR = fileURLToPath(new URL('../../../knative/webhooks/', import.meta.url));
export const TEST_LABEL = 'admission-test';
const CLUSTER_SCOPED = new Set(['clustervirtualimages', 'virtualmachineclasses', 'virtualmachineipaddressleases', 'moduleconfigs']);

interface Webhook {
  name: string;
  clientConfig: { service?: { path: string }; url?: string; caBundle?: string };
  rules: Array<{ resources: string[] }>;
  namespaceSelector?: unknown;
  objectSelector?: unknown;
}

interface Configuration {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  webhooks: Webhook[];
}

function localize(config: Configuration, cluster: AdmissionCluster): Configuration {
  const selector = { matchLabels: { [TEST_LABEL]: cluster.id } };
  return {
    ...config,
    metadata: { name: `${config.metadata.name}-${cluster.id}`, labels: config.metadata.labels ?? {} },
    webhooks: config.webhooks.map((w) => {
      const clusterScoped = w.rules.some((r) => r.resources.some((res) => CLUSTER_SCOPED.has(res.split('/')[0] ?? '')));
      return {
        ...w,
        clientConfig: { url: `${cluster.webhook.url}${w.clientConfig.service?.path ?? ''}`, caBundle: cluster.caBundle },
        ...(clusterScoped ? { objectSelector: selector } : { namespaceSelector: selector }),
      };
    }),
  };
}

/** Install both configurations; returns their names for deletion. */
export async function installWebhooks(cluster: AdmissionCluster): Promise<string[]> {
  const files = readdirSync(WEBHOOKS_DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
  const configs: Configuration[] = [];
  for (const f of files) {
    const json = await cluster.ok(['create', '--dry-run=client', '-o', 'json', '-f', join(WEBHOOKS_DIR, f)]);
    configs.push(localize(JSON.parse(json) as Configuration, cluster));
  }
  await cluster.ok(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: configs }));
  return configs.map((c) => `${c.kind.toLowerCase()}/${c.metadata.name}`);
}
