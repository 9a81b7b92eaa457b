/** The subresources function's state and handler context, as every part of it sees them. */
import type { WebSocketServer } from 'ws';
import type { Informer, KubeClient, KubeObject } from '../../shared/kube/index.js';
import type { Counter, Gauge } from '../../shared/metrics/index.js';
import type { HandlerContext } from '../../shared/runtime/index.js';
import type { VirtApi } from './backend.js';
import type { SubresourcesConfig } from './config.js';
import type { RequestHeaderConfig } from './frontproxy.js';
import type { Sessions } from './sessions.js';
import type { VmLookup } from './vms.js';

export interface SubresourcesState {
  readonly kube: KubeClient;
  readonly authConfig: Informer<KubeObject>;
  readonly vms: VmLookup;
  readonly virtApi: VirtApi;
  readonly sessions: Sessions;
  readonly sockets: WebSocketServer;
  readonly metrics: {
    readonly streams: Gauge<'subresource'>;
    readonly backendFailures: Counter<'subresource'>;
    readonly refused: Counter<'reason'>;
  };
  /** The parsed ConfigMap, keyed by its resourceVersion; the error when it is missing or broken. */
  parsed: { version: string; config: RequestHeaderConfig | Error } | undefined;
}

export type Ctx = HandlerContext<SubresourcesConfig, SubresourcesState>;
