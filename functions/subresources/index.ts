/**
 * subresources: the aggregated API server for subresources.virtualization.deckhouse.io/v1alpha2 on
 * the function host. The kube-apiserver authenticates and authorizes the user, then proxies here with
 * its front-proxy client certificate; this function checks that certificate, names the user from the
 * headers, looks the VM up and calls virt-api (subresources.kubevirt.io/v1) with its own client
 * certificate: plain calls (freeze, volumes, ...) as HTTP, consoles, VNC and port forwarding as a
 * WebSocket relay.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { WebSocketServer } from 'ws';
import { launcherSelector } from '../../shared/api/internal/launcher.js';
import { errorMessage } from '../../shared/errors/index.js';
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
import { defineFunction, runIfMain, type HandlerContext, type RouteRequest, type RouteResponse, type UpgradeRequest } from '../../shared/runtime/index.js';
import { answerOnSocket } from '../../shared/runtime/http/upgrade.js';
import * as api from './api.js';
import { BackendRefusedError, BackendUnavailableError, VirtApi } from './backend.js';
import { subresourcesConfig, type SubresourcesConfig } from './config.js';
import { AUTH_CONFIGMAP, authenticate, parseRequestHeaderConfig, type RemoteUser, type RequestHeaderConfig } from './frontproxy.js';
import { OptionsError, plainUpstream, streamUpstreamPath } from './options.js';
import { Sessions, type Session, type SessionKind } from './sessions.js';
import { relay, splice } from './stream.js';
import { VmLookup } from './vms.js';

/** The subprotocols a client may ask for: Deckhouse's, and KubeVirt's (virtctl). */
export const STREAM_PROTOCOLS = ['plain.virtualization.deckhouse.io', 'plain.kubevirt.io'] as const;
const BACKEND_PROTOCOL = 'plain.kubevirt.io';
const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const VM_PATH = new RegExp(`^${api.BASE_PATH.replace(/\./g, '\\.')}/namespaces/([^/]+)/virtualmachines/([^/]+)(?:/([^/]+))?/?$`);

export interface SubresourcesState {
  readonly kube: KubeClient;
  readonly authConfig: Informer<KubeObject>;
  readonly vms: VmLookup;
  readonly virtApi: VirtApi;
  readonly sessions: Sessions;
  readonly sockets: WebSocketServer;
  readonly metrics: {
    readonly streams: import('../../shared/metrics/index.js').Gauge<'subresource'>;
    readonly backendFailures: import('../../shared/metrics/index.js').Counter<'subresource'>;
    readonly refused: import('../../shared/metrics/index.js').Counter<'reason'>;
  };
  /** The parsed ConfigMap, keyed by its resourceVersion; the error when it is missing or broken. */
  parsed: { version: string; config: RequestHeaderConfig | Error } | undefined;
}

type Ctx = HandlerContext<SubresourcesConfig, SubresourcesState>;

/** The front-proxy configuration as the apiserver publishes it now, or why there is none. */
function requestHeaderConfig(state: SubresourcesState): RequestHeaderConfig | Error {
  const cm = state.authConfig.store.get({ namespace: AUTH_CONFIGMAP.namespace, name: AUTH_CONFIGMAP.name });
  if (cm === undefined) return new Error(`ConfigMap ${AUTH_CONFIGMAP.namespace}/${AUTH_CONFIGMAP.name} is not known (yet)`);
  const version = cm.metadata.resourceVersion ?? '';
  if (state.parsed?.version !== version) {
    let config: RequestHeaderConfig | Error;
    try {
      config = parseRequestHeaderConfig((cm as { data?: Record<string, string> }).data);
    } catch (err: unknown) {
      config = err instanceof Error ? err : new Error(String(err));
    }
    state.parsed = { version, config };
  }
  return state.parsed.config;
}

type Authenticated = { user: RemoteUser } | { refusal: { status: number; body: object } };

function who(ctx: Ctx, cert: UpgradeRequest['peerCertificate'], headers: RouteRequest['headersDistinct']): Authenticated {
  const config = requestHeaderConfig(ctx.state);
  if (config instanceof Error) {
    ctx.state.metrics.refused.inc({ reason: 'no-front-proxy-config' });
    return { refusal: api.status(503, 'ServiceUnavailable', `cannot authenticate: ${config.message}`) };
  }
  const result = authenticate(config, cert, headers);
  if (!result.ok) {
    ctx.state.metrics.refused.inc({ reason: 'unauthenticated' });
    ctx.log.info({ reason: result.reason }, 'request refused: not the front proxy');
    return { refusal: api.status(401, 'Unauthorized', `Unauthorized: ${result.reason}`) };
  }
  return { user: result.user };
}

/** A route that only the aggregator may call. */
function guarded(handle: (req: RouteRequest, ctx: Ctx, user: RemoteUser) => Promise<RouteResponse> | RouteResponse) {
  return async (req: RouteRequest, ctx: Ctx): Promise<RouteResponse> => {
    const auth = who(ctx, req.peerCertificate, req.headersDistinct);
    if ('refusal' in auth) return auth.refusal;
    return handle(req, ctx, auth.user);
  };
}

const vmNotFound = (namespace: string, name: string): { status: number; body: object } =>
  api.status(404, 'NotFound', `virtualmachines.virtualization.deckhouse.io "${name}" not found in namespace ${namespace}`, {
    name,
    group: 'virtualization.deckhouse.io',
    kind: 'virtualmachines',
  });

/** The VM, or the answer when it is missing or not in a phase the subresource needs. */
async function lookUp(
  ctx: Ctx,
  namespace: string,
  name: string,
  sub: api.Subresource | undefined,
): Promise<{ vm: KubeObject } | { refusal: { status: number; body: object } }> {
  let vm;
  try {
    vm = await ctx.state.vms.get(namespace, name, ctx.signal);
  } catch (err: unknown) {
    ctx.log.warn({ err, namespace, name }, 'VM lookup failed');
    return { refusal: api.status(503, 'ServiceUnavailable', `cannot look up VirtualMachine ${namespace}/${name}: ${errorMessage(err)}`) };
  }
  if (vm === undefined) return { refusal: vmNotFound(namespace, name) };
  if (sub?.needsRunning === true) {
    const allowed = sub.stream ? ['Running', 'Migrating'] : ['Running'];
    if (!allowed.includes(vm.phase ?? '')) {
      return {
        refusal: api.status(
          400,
          'BadRequest',
          `VirtualMachine ${namespace}/${name} is ${vm.phase ?? 'without a phase'}: ${sub.name} needs it ${allowed.join(' or ')}`,
        ),
      };
    }
  }
  return { vm: vm.object };
}

const subresourceOf = (name: string): api.Subresource | undefined => api.SUBRESOURCES.find((s) => s.name === name);

async function putSubresource(req: RouteRequest, ctx: Ctx, user: RemoteUser): Promise<RouteResponse> {
  const { namespace, name, sub } = req.params as { namespace: string; name: string; sub: string };
  const subresource = subresourceOf(sub);
  if (subresource === undefined) return api.status(404, 'NotFound', `virtualmachines/${sub} is not a subresource of ${api.GROUP_VERSION}`);
  if (subresource.stream) return api.status(400, 'BadRequest', `virtualmachines/${sub} is a stream: connect with GET and an Upgrade: websocket`);
  let upstream;
  try {
    upstream = plainUpstream(sub, namespace, name, req.query, req.body);
  } catch (err: unknown) {
    if (err instanceof OptionsError) return api.status(400, 'BadRequest', err.message);
    throw err;
  }
  const found = await lookUp(ctx, namespace, name, subresource);
  if ('refusal' in found) return found.refusal;
  try {
    const answer = await ctx.state.virtApi.call('PUT', upstream.path, upstream.body, user, ctx.signal);
    ctx.log.info({ sub, namespace, name, user: user.name, status: answer.status }, 'proxied to virt-api');
    const type = answer.headers['content-type'];
    return { status: answer.status, headers: type === undefined ? {} : { 'content-type': type }, body: answer.body };
  } catch (err: unknown) {
    if (!(err instanceof BackendUnavailableError)) throw err;
    ctx.state.metrics.backendFailures.inc({ subresource: sub });
    ctx.log.warn({ sub, namespace, name, reason: err.message }, 'virt-api unavailable');
    return api.status(503, 'ServiceUnavailable', err.message);
  }
}

async function getVmOrSub(req: RouteRequest, ctx: Ctx): Promise<RouteResponse> {
  const { namespace, name, sub } = req.params as { namespace: string; name: string; sub?: string };
  if (sub !== undefined && sub !== 'scale') {
    const subresource = subresourceOf(sub);
    if (subresource === undefined) return api.status(404, 'NotFound', `virtualmachines/${sub} is not a subresource of ${api.GROUP_VERSION}`);
    if (subresource.stream && req.query.get('probe') === 'true' && isSessionKind(sub)) return probe(ctx, namespace, name, sub);
    if (subresource.stream)
      return api.status(400, 'BadRequest', `virtualmachines/${sub} needs an Upgrade: websocket (WebSocket subprotocol ${STREAM_PROTOCOLS[0]})`);
    return api.status(405, 'MethodNotAllowed', `virtualmachines/${sub} takes PUT`);
  }
  const found = await lookUp(ctx, namespace, name, undefined);
  if ('refusal' in found) return found.refusal;
  const md = found.vm.metadata;
  if (sub === 'scale') {
    return {
      body: {
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        metadata: { name: md.name, namespace: md.namespace, uid: md.uid, resourceVersion: md.resourceVersion, creationTimestamp: md.creationTimestamp },
        spec: { replicas: 1 },
        status: {
          replicas: 1,
          selector: launcherSelector(md.name),
        },
      },
    };
  }
  return { body: { apiVersion: api.GROUP_VERSION, kind: 'VirtualMachine', metadata: md } };
}

const isSessionKind = (sub: string): sub is SessionKind => sub === 'console' || sub === 'vnc';

/** `probe=true` on console/vnc: the session holding it now, without connecting. */
async function probe(ctx: Ctx, namespace: string, name: string, kind: SessionKind): Promise<RouteResponse> {
  const found = await lookUp(ctx, namespace, name, undefined);
  if ('refusal' in found) return found.refusal;
  try {
    return { body: await ctx.state.sessions.probe(kind, found.vm) };
  } catch (err: unknown) {
    ctx.log.warn({ err, namespace, name, kind }, 'session lease not readable');
    return api.status(503, 'ServiceUnavailable', `cannot read the ${kind} session of VirtualMachine ${namespace}/${name}: ${errorMessage(err)}`);
  }
}

/** The session record of a console or VNC stream that just opened (nothing for port forwarding). */
function track(ctx: Ctx, sub: string, vm: KubeObject, user: RemoteUser, request: UpgradeRequest['request']): Session | undefined {
  if (!isSessionKind(sub)) return undefined;
  return ctx.state.sessions.start(sub, vm, user.name, request.headers['user-agent'] ?? '');
}

/** Consoles, VNC and port forwarding: check, open virt-api's side, then upgrade the client's. */
async function upgrade(up: UpgradeRequest, ctx: Ctx): Promise<void> {
  const { request, socket, head } = up;
  const fail = (answer: { status: number; body: object }): void => answerOnSocket(socket, answer.status, '', JSON.stringify(answer.body));
  const auth = who(ctx, up.peerCertificate, request.headersDistinct);
  if ('refusal' in auth) return fail(auth.refusal);
  const url = new URL(request.url ?? '/', 'http://host');
  const match = VM_PATH.exec(url.pathname);
  const sub = match?.[3] === undefined ? undefined : subresourceOf(match[3]);
  if (match === null || sub === undefined || !sub.stream) return fail(api.status(404, 'NotFound', `no stream at ${url.pathname}`));
  const [namespace, name] = [decodeURIComponent(match[1]), decodeURIComponent(match[2])];
  if (url.searchParams.get('probe') === 'true' && isSessionKind(sub.name)) {
    const answer = await probe(ctx, namespace, name, sub.name);
    return answerOnSocket(socket, answer.status ?? 200, '', JSON.stringify(answer.body));
  }
  let path: string;
  try {
    path = streamUpstreamPath(sub.name, namespace, name, url.searchParams);
  } catch (err: unknown) {
    if (err instanceof OptionsError) return fail(api.status(400, 'BadRequest', err.message));
    throw err;
  }
  const found = await lookUp(ctx, namespace, name, sub);
  if ('refusal' in found) return fail(found.refusal);
  const stream = { sub: sub.name, namespace, name, user: auth.user, vm: found.vm };
  if ((request.headers.upgrade ?? '').toLowerCase() !== 'websocket') return spliceUpgrade(up, ctx, path, stream);
  let backend;
  try {
    backend = await ctx.state.virtApi.dial(path, BACKEND_PROTOCOL, auth.user);
  } catch (err: unknown) {
    ctx.state.metrics.backendFailures.inc({ subresource: sub.name });
    if (err instanceof BackendRefusedError) return fail(api.status(err.status, 'ServiceUnavailable', err.message));
    if (err instanceof BackendUnavailableError) return fail(api.status(503, 'ServiceUnavailable', err.message));
    throw err;
  }
  if (socket.destroyed) {
    backend.terminate();
    return;
  }
  // A handshake `ws` refuses (bad key or version) never reaches the callback: virt-api's side goes too.
  let upgraded = false;
  socket.once('close', () => {
    if (!upgraded) backend.terminate();
  });
  ctx.state.sockets.handleUpgrade(request, socket, head, (client) => {
    upgraded = true;
    const { streams } = ctx.state.metrics;
    streams.inc({ subresource: sub.name });
    ctx.log.info({ sub: sub.name, namespace, name, user: auth.user.name }, 'stream opened');
    const session = track(ctx, sub.name, found.vm, auth.user, request);
    void relay(client, backend, { highWaterBytes: ctx.config.STREAM_BUFFER_BYTES, signal: ctx.signal, log: ctx.log }).then((end) => {
      streams.dec({ subresource: sub.name });
      void session?.end();
      ctx.log.info({ sub: sub.name, namespace, name, endedBy: end.by, code: end.code }, 'stream closed');
    });
  });
}

/** Request headers not passed on to virt-api: hop-by-hop ones, credentials and the front proxy's identity. */
const NOT_FORWARDED = new Set(['host', 'authorization', 'content-length', 'transfer-encoding', 'keep-alive', 'proxy-connection', 'te', 'trailer']);

function forwardedHeaders(request: UpgradeRequest['request']): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, values] of Object.entries(request.headersDistinct)) {
    if (values === undefined || NOT_FORWARDED.has(key) || key.startsWith('x-remote-') || key.startsWith('impersonate-')) continue;
    out[key] = values;
  }
  return out;
}

/** The 101 (or any) status line and headers of virt-api's answer, as bytes for the client's socket. */
function responseHead(res: import('node:http').IncomingMessage): string {
  const lines = [`HTTP/1.1 ${res.statusCode ?? 101} ${res.statusMessage ?? ''}`.trimEnd()];
  for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * A non-WebSocket upgrade (SPDY/3.1 from kubectl-style clients): the handshake goes to virt-api as it
 * came (our identity in place of the front proxy's headers), virt-api's 101 goes back to the client
 * and the bytes are spliced both ways (3.3: the original's UpgradeAwareHandler). A refusal by virt-api
 * passes through with its status and body; virt-api unreachable is 503.
 */
async function spliceUpgrade(
  up: UpgradeRequest,
  ctx: Ctx,
  path: string,
  { vm, ...stream }: { sub: string; namespace: string; name: string; user: RemoteUser; vm: KubeObject },
): Promise<void> {
  const { request, socket, head } = up;
  const protocol = request.headers.upgrade ?? '';
  let backend;
  try {
    backend = await ctx.state.virtApi.upgrade({ method: request.method ?? 'GET', path, headers: forwardedHeaders(request) }, stream.user);
  } catch (err: unknown) {
    ctx.state.metrics.backendFailures.inc({ subresource: stream.sub });
    if (err instanceof BackendRefusedError) {
      ctx.log.info({ ...stream, user: stream.user.name, protocol, status: err.status }, 'virt-api refused the upgrade');
      if (err.contentType?.includes('json') === true) return answerOnSocket(socket, err.status, '', err.body);
      return answerOnSocket(socket, err.status, '', JSON.stringify(api.status(err.status, 'ServiceUnavailable', err.message).body));
    }
    if (err instanceof BackendUnavailableError) return answerOnSocket(socket, 503, '', JSON.stringify(api.status(503, 'ServiceUnavailable', err.message).body));
    throw err;
  }
  if (socket.destroyed) {
    backend.socket.destroy();
    return;
  }
  socket.write(responseHead(backend.response));
  if (backend.head.length > 0) socket.write(backend.head);
  if (head.length > 0) backend.socket.write(head);
  const { streams } = ctx.state.metrics;
  streams.inc({ subresource: stream.sub });
  ctx.log.info({ ...stream, user: stream.user.name, protocol }, 'stream opened');
  const session = track(ctx, stream.sub, vm, stream.user, request);
  const end = await splice(socket, backend.socket, { signal: ctx.signal, log: ctx.log });
  streams.dec({ subresource: stream.sub });
  void session?.end();
  ctx.log.info({ ...stream, user: stream.user.name, protocol, endedBy: end.by }, 'stream closed');
}

const json = (body: object) => (): RouteResponse => ({ body });
const V3_DOC = api.openApiV3Document();
const V3_HASH = createHash('sha512').update(JSON.stringify(V3_DOC)).digest('hex').slice(0, 32).toUpperCase();
const VM_ROUTE = `${api.BASE_PATH}/namespaces/:namespace/virtualmachines/:name`;

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
  routes: [
    { method: 'get', path: '/apis', handle: guarded(json(api.apiGroupList())) },
    { method: 'get', path: `/apis/${api.GROUP}`, handle: guarded(json(api.apiGroup())) },
    { method: 'get', path: api.BASE_PATH, handle: guarded(json(api.resourceList())) },
    { method: 'get', path: '/openapi/v2', handle: guarded(json(api.openApiV2())) },
    {
      method: 'get',
      path: '/openapi/v3',
      handle: guarded(
        json({ paths: { [`apis/${api.GROUP}/${api.VERSION}`]: { serverRelativeURL: `/openapi/v3/apis/${api.GROUP}/${api.VERSION}?hash=${V3_HASH}` } } }),
      ),
    },
    { method: 'get', path: `/openapi/v3/apis/${api.GROUP}/${api.VERSION}`, handle: guarded(json(V3_DOC)) },
    { method: 'get', path: VM_ROUTE, handle: guarded(getVmOrSub) },
    { method: 'get', path: `${VM_ROUTE}/:sub`, handle: guarded(getVmOrSub) },
    { method: 'post', path: `${VM_ROUTE}/:sub`, handle: guarded(getVmOrSub) },
    { method: 'put', path: `${VM_ROUTE}/:sub`, handle: guarded(putSubresource) },
  ],
  upgrade,
  readiness: ({ state }) => !(requestHeaderConfig(state) instanceof Error),
  shutdown: async ({ state }) => {
    await state.authConfig.stop();
    state.sockets.close();
    state.kube.close();
  },
});

runIfMain(import.meta.url, subresources);
