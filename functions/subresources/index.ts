/**
 * subresources: the aggregated API server for subresources.virtualization.deckhouse.io/v1alpha2 on
 * the function host. The kube-apiserver authenticates and authorizes the user, then proxies here with
 * its front-proxy client certificate; this function checks that certificate, names the user from the
 * headers, looks the VM up and calls virt-api (subresources.kubevirt.io/v1) with its own client
 * certificate: plain calls (freeze, volumes, ...) as HTTP, consoles, VNC and port forwarding as a
 * WebSocket relay.
 */
import { hostname } from 'node:os';
import { WebSocketServer } from 'ws';
import {
  EventRecorder,
  eventDescriptor,
  eventSchema,
  Informer,
  KubeClient,
  kubeObjectSchema,
  leaseDescriptor,
  leaseSchema,
  type KubeObject,
} from '../../shared/kube/index.js';
import { defineFunction, runIfMain } from '../../shared/runtime/index.js';
import { requestHeaderConfig } from './authentication.js';
import { VirtApi } from './backend.js';
import { subresourcesConfig } from './config.js';
import { AUTH_CONFIGMAP } from './frontproxy.js';
import { routes } from './routes.js';
import { Sessions } from './sessions.js';
import type { SubresourcesState } from './state.js';
import { STREAM_PROTOCOLS, upgrade } from './upgrade.js';
import { VmLookup } from './vms.js';

export type { SubresourcesState } from './state.js';

const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };

export const subresources = defineFunction({
  name: 'subresources',
  config: subresourcesConfig,
  clientCertificates: 'request',
  init: ({ config, log, metrics }): SubresourcesState => {
    const kube = KubeClient.fromSource(config.KUBECONFIG === undefined ? { inCluster: true } : { kubeconfigPath: config.KUBECONFIG }, {
      requestTimeoutMs: config.LOOKUP_TIMEOUT_MS,
    });
    const authConfig = new Informer<KubeObject>({
      client: kube.resource(CONFIGMAPS, kubeObjectSchema, 'subresources'),
      namespace: AUTH_CONFIGMAP.namespace,
      fieldSelector: `metadata.name=${AUTH_CONFIGMAP.name}`,
      logger: log,
    }).start();
    return {
      kube,
      authConfig,
      vms: new VmLookup(kube),
      virtApi: new VirtApi({
        url: config.VIRT_API_URL,
        caFile: config.VIRT_API_CA_FILE,
        certFile: config.VIRT_API_CLIENT_CERT_FILE,
        keyFile: config.VIRT_API_CLIENT_KEY_FILE,
        reloadMs: config.VIRT_API_TLS_RELOAD_MS,
        remoteUser: config.VIRT_API_REMOTE_USER,
        remoteGroups: config.VIRT_API_REMOTE_GROUPS,
        timeoutMs: config.VIRT_API_TIMEOUT_MS,
      }),
      sessions: new Sessions({
        leases: kube.resource(leaseDescriptor, leaseSchema, 'subresources'),
        events: new EventRecorder({
          events: kube.resource(eventDescriptor, eventSchema, 'subresources'),
          reportingController: 'virtualization.deckhouse.io/subresources',
          reportingInstance: hostname(),
          logger: log,
        }),
        log,
        durationSeconds: config.SESSION_LEASE_SECONDS,
        renewMs: config.SESSION_RENEW_MS,
      }),
      sockets: new WebSocketServer({
        noServer: true,
        maxPayload: 16 * 1024 * 1024,
        handleProtocols: (offered) => STREAM_PROTOCOLS.find((p) => offered.has(p)) ?? false,
      }),
      metrics: {
        streams: metrics.gauge({ name: 'subresources_streams_open', help: 'Console, VNC and port-forward sessions open now.', labelNames: ['subresource'] }),
        backendFailures: metrics.counter({
          name: 'subresources_virt_api_failures_total',
          help: 'Calls and streams virt-api could not take (unreachable, refused the stream).',
          labelNames: ['subresource'],
        }),
        refused: metrics.counter({
          name: 'subresources_unauthenticated_total',
          help: 'Requests refused before any work: no valid front-proxy certificate or user (unauthenticated), or no front-proxy configuration.',
          labelNames: ['reason'],
        }),
      },
      parsed: undefined,
    };
  },
  routes,
  upgrade,
  readiness: ({ state }) => !(requestHeaderConfig(state) instanceof Error),
  shutdown: async ({ state }) => {
    await state.authConfig.stop();
    state.sockets.close();
    state.kube.close();
  },
});

runIfMain(import.meta.url, subresources);
