import type { ZodType } from 'zod';
import type { KubeObject, ResourceDescriptor } from './descriptor.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig, type KubeConfigLoad } from './kubeconfig.js';
import { ResourceClient } from './resource-client.js';
import { RestTransport } from './rest.js';

export interface KubeClientOptions {
  /** Deadline for one non-watch request. Default 30 s. */
  requestTimeoutMs?: number;
}

/** The one handle a unit holds on the apiserver: typed resource clients over a shared keep-alive transport. */
export class KubeClient {
  readonly rest: RestTransport;

  constructor(
    readonly kubeConfig: KubeConfig,
    options: KubeClientOptions = {},
  ) {
    this.rest = new RestTransport(kubeConfig, options.requestTimeoutMs);
  }

  static fromSource(source: KubeConfigLoad = {}, options: KubeClientOptions = {}): KubeClient {
    return new KubeClient(loadKubeConfig(source), options);
  }

  /** A typed client for one resource; every write is attributed to `fieldManager`. */
  resource<T extends KubeObject>(descriptor: ResourceDescriptor, schema: ZodType<T>, fieldManager: string): ResourceClient<T> {
    return new ResourceClient(this.rest, descriptor, schema, { fieldManager });
  }

  /** Close pooled connections. */
  close(): void {
    this.rest.close();
  }
}
