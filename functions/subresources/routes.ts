/** The plain routes: discovery and OpenAPI documents, GET of a VM or its scale, PUT of a subresource to virt-api. */
import { createHash } from 'node:crypto';
import { launcherSelector } from '../../shared/api/internal/launcher.js';
import type { Route, RouteRequest, RouteResponse } from '../../shared/runtime/index.js';
import * as api from './api.js';
import { guarded } from './authentication.js';
import { BackendUnavailableError } from './backend.js';
import type { SubresourcesConfig } from './config.js';
import type { RemoteUser } from './frontproxy.js';
import { isSessionKind, lookUp, probe, subresourceOf } from './lookups.js';
import { OptionsError, plainUpstream } from './options.js';
import { scaleDownWith } from './pools.js';
import type { Ctx, SubresourcesState } from './state.js';
import { STREAM_PROTOCOLS } from './upgrade.js';

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

const json = (body: object) => (): RouteResponse => ({ body });
const V3_DOC = api.openApiV3Document();
const V3_HASH = createHash('sha512').update(JSON.stringify(V3_DOC)).digest('hex').slice(0, 32).toUpperCase();
const VM_ROUTE = `${api.BASE_PATH}/namespaces/:namespace/virtualmachines/:name`;

/** Every plain route of the function. */
export const routes: Route<SubresourcesConfig, SubresourcesState>[] = [
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
  { method: 'post', path: `${api.BASE_PATH}/namespaces/:namespace/virtualmachinepools/:name/scaledownwith`, handle: guarded(scaleDownWith) },
];
