/**
 * Knative eventing's part for the pre-delete function, on a cluster without Knative: what the
 * install's ApiServerSource `moduleconfigs` (Resource mode, as ServiceAccount `moduleconfig-source`),
 * Broker `virtualization` and the two Triggers (`dev.knative.apiserver.resource.update` and
 * `.delete`) do. A ModuleConfig update or deletion becomes a binary-mode CloudEvent whose data is the
 * object; the first one starts the pre-delete function ("scale from zero": it runs on demand only),
 * and delivery is retried three times with exponential backoff from 10 s, as the Triggers say. Each
 * delivery carries the Trigger's sender identity as Knative's OIDC feature does (a token of the
 * Trigger's ServiceAccount, knative/rbac/components/senders.yaml), which pre-delete checks.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ObjectMetaSchema } from '../shared/api/k8s/core.js';
import { errorMessage } from '../shared/errors/index.js';
import { Informer, type KubeClient } from '../shared/kube/index.js';
import { rootLogger } from '../shared/log/index.js';

const ModuleConfigSchema = z.looseObject({ apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema });
type ModuleConfig = z.infer<typeof ModuleConfigSchema>;

export const TRIGGER_TYPES = ['dev.knative.apiserver.resource.update', 'dev.knative.apiserver.resource.delete'] as const;
const RETRIES = 3;
const BACKOFF_MS = 10_000;

export interface Subscriber {
  /** Start the subscriber if it is not running; resolves with its URL. */
  ensure(): Promise<string>;
}

/** The ServiceAccount a Trigger delivers as with Knative's sender identity (`<trigger>-oidc-<group>-<kind>`). */
export const triggerIdentity = (trigger: string): string => `${trigger}-oidc-eventing.knative.dev-trigger`;
/** The install's Triggers (knative/eventing/pre-delete-triggers.yaml), by the type each passes. */
export const TRIGGER_NAMES: Readonly<Record<(typeof TRIGGER_TYPES)[number], string>> = {
  'dev.knative.apiserver.resource.update': 'pre-delete-on-update',
  'dev.knative.apiserver.resource.delete': 'pre-delete-on-delete',
};

/** The CloudEvent the ApiServerSource sends for a change of `obj`, in binary mode. */
export function apiServerSourceEvent(type: string, obj: ModuleConfig, source: string): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      'ce-specversion': '1.0',
      'ce-id': randomUUID(),
      'ce-type': type,
      'ce-source': source,
      'ce-subject': `/apis/deckhouse.io/v1alpha1/moduleconfigs/${obj.metadata.name ?? ''}`,
      'ce-time': new Date().toISOString(),
      'content-type': 'application/json',
    },
    body: JSON.stringify({ apiVersion: 'deckhouse.io/v1alpha1', kind: 'ModuleConfig', ...obj }),
  };
}

export class ModuleConfigTriggers {
  private readonly abort = new AbortController();
  private informer: Informer<ModuleConfig> | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    /** As the ApiServerSource's ServiceAccount. */
    private readonly kube: KubeClient,
    private readonly subscriber: Subscriber,
    private readonly say: (line: string) => void,
    /** A token of the ServiceAccount `sa` (the Trigger's sender identity). */
    private readonly tokenOf: (sa: string) => Promise<string>,
  ) {}

  async start(): Promise<void> {
    const client = this.kube.resource(
      { group: 'deckhouse.io', version: 'v1alpha1', plural: 'moduleconfigs', kind: 'ModuleConfig', namespaced: false },
      ModuleConfigSchema,
      'moduleconfig-source',
    );
    const inf = new Informer<ModuleConfig>({
      client,
      signal: this.abort.signal,
      logger: rootLogger.child({ component: 'moduleconfig-source' }, { level: 'silent' }),
    });
    let synced = false;
    // Only changes after the first list: the Triggers pass updates and deletions, never the replayed adds.
    inf.on('update', (o) => {
      if (synced) this.enqueue(TRIGGER_TYPES[0], o);
    });
    inf.on('delete', (o) => {
      if (synced) this.enqueue(TRIGGER_TYPES[1], o);
    });
    this.informer = inf.start();
    await inf.synced;
    synced = true;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.informer?.stop();
    await this.chain.catch(() => undefined);
  }

  private enqueue(type: (typeof TRIGGER_TYPES)[number], obj: ModuleConfig): void {
    this.chain = this.chain.then(() => this.deliver(type, obj)).catch(() => undefined);
  }

  private async deliver(type: (typeof TRIGGER_TYPES)[number], obj: ModuleConfig): Promise<void> {
    const what = `${type.replace('dev.knative.apiserver.resource.', '')} of ModuleConfig ${obj.metadata.name ?? ''}`;
    for (let attempt = 0; attempt <= RETRIES && !this.abort.signal.aborted; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, BACKOFF_MS * 2 ** (attempt - 1)));
      try {
        const url = await this.subscriber.ensure();
        const event = apiServerSourceEvent(type, obj, this.kube.kubeConfig.getCurrentCluster()?.server ?? 'kube-apiserver');
        const authorization = `Bearer ${await this.tokenOf(triggerIdentity(TRIGGER_NAMES[type]))}`;
        const res = await fetch(url, { method: 'POST', headers: { ...event.headers, authorization }, body: event.body, signal: this.abort.signal });
        const text = await res.text();
        if (res.ok) {
          this.say(`pre-delete: ${what} delivered (${res.status})`);
          return;
        }
        this.say(`pre-delete: ${what} answered ${res.status}: ${text.slice(0, 200)}`);
        if (res.status < 500) return;
      } catch (err: unknown) {
        if (this.abort.signal.aborted) return;
        this.say(`pre-delete: ${what} not delivered: ${errorMessage(err)}`);
      }
    }
  }
}
