/**
 * The install's webhook configurations (knative/webhooks/), pointed at a webhook served outside the
 * cluster: each webhook's service reference becomes `<url><path>` with the given CA, and every
 * webhook is limited to objects labelled `<label key>=<label value>` (namespaced resources by their
 * namespace's label, cluster-scoped ones by their own). The admission system test and the controller
 * benchmark use it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
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

export interface WebhookConfiguration {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  webhooks: Webhook[];
}

/** Where the webhooks are served and which objects they see. */
export interface WebhookTarget {
  /** `https://host:port`, the webhook paths are appended. */
  readonly url: string;
  /** PEM of the serving certificate's CA, base64. */
  readonly caBundle: string;
  readonly label: { readonly key: string; readonly value: string };
}

function localize(config: WebhookConfiguration, target: WebhookTarget): WebhookConfiguration {
  const selector = { matchLabels: { [target.label.key]: target.label.value } };
  return {
    ...config,
    metadata: { name: `${config.metadata.name}-${target.label.value}`, labels: config.metadata.labels ?? {} },
    webhooks: config.webhooks.map((w) => {
      const clusterScoped = w.rules.some((r) => r.resources.some((res) => CLUSTER_SCOPED.has(res.split('/')[0] ?? '')));
      return {
        ...w,
        clientConfig: { url: `${target.url}${w.clientConfig.service?.path ?? ''}`, caBundle: target.caBundle },
        ...(clusterScoped ? { objectSelector: selector } : { namespaceSelector: selector }),
      };
    }),
  };
}

/** The configurations of `knative/webhooks/` (those `kinds` names, else all), localized to `target`. */
export function localWebhookConfigurations(target: WebhookTarget, kinds?: readonly string[]): WebhookConfiguration[] {
  const files = readdirSync(WEBHOOKS_DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
  return files
    .map((f) => load(readFileSync(join(WEBHOOKS_DIR, f), 'utf8')) as WebhookConfiguration)
    .filter((c) => kinds === undefined || kinds.includes(c.kind))
    .map((c) => localize(c, target));
}

/** Install both configurations for the admission test cluster; returns their names for deletion. */
export async function installWebhooks(cluster: AdmissionCluster): Promise<string[]> {
  const configs = localWebhookConfigurations({ url: cluster.webhook.url, caBundle: cluster.caBundle, label: { key: TEST_LABEL, value: cluster.id } });
  await cluster.ok(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: configs }));
  return configs.map((c) => `${c.kind.toLowerCase()}/${c.metadata.name}`);
}
