import { KubeConfig, type ApiConstructor, type ApiType } from '@kubernetes/client-node';
import type { ZodType } from 'zod';
import type { KubeObject, ResourceDescriptor } from './descriptor.js';
import { ResourceClient } from './resource-client.js';
import { RestTransport } from './rest.js';

export interface KubeConfigSource {
  /** A kubeconfig file; wins over everything else. */
  kubeconfigPath?: string | undefined;
  /** Use the pod's service account (KUBERNETES_SERVICE_HOST/PORT and the mounted token and CA). */
  inCluster?: boolean;
  /** A context other than the file's current one. */
  context?: string | undefined;
}

/**
 * A KubeConfig from, in order: an explicit kubeconfig path, in-cluster service account, or the client
 * library's default search (KUBECONFIG, ~/.kube/config, then in-cluster).
 */
export function loadKubeConfig(source: KubeConfigSource = {}): KubeConfig {
  const kc = new KubeConfig();
  if (source.kubeconfigPath) kc.loadFromFile(source.kubeconfigPath);
  else if (source.inCluster) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (source.context) kc.setCurrentContext(source.context);
  return kc;
}

export interface KubeClientOptions {
  /** Deadline for one non-watch request. Default 30 s. */
  requestTimeoutMs?: number;
}

/**
 * The one handle a unit holds on the apiserver: typed resource clients over a shared keep-alive
 * transport, and the generated @kubernetes/client-node API classes for anything else.
 */
export class KubeClient {
  readonly rest: RestTransport;

  constructor(
    readonly kubeConfig: KubeConfig,
    options: KubeClientOptions = {},
  ) {
    this.rest = new RestTransport(kubeConfig, options.requestTimeoutMs);
  }

  static fromSource(source: KubeConfigSource = {}, options: KubeClientOptions = {}): KubeClient {
    return new KubeClient(loadKubeConfig(source), options);
  }

  /** A typed client for one resource; every write is attributed to `fieldManager`. */
  resource<T extends KubeObject>(descriptor: ResourceDescriptor, schema: ZodType<T>, fieldManager: string): ResourceClient<T> {
    return new ResourceClient(this.rest, descriptor, schema, { fieldManager });
  }

  /** A generated API client, e.g. `api(CoreV1Api)`. */
  api<T extends ApiType>(apiClass: ApiConstructor<T>): T {
    return this.kubeConfig.makeApiClient(apiClass);
  }

  /** Close pooled connections. */
  close(): void {
    this.rest.close();
  }
}
