/** Who is calling: only the aggregator (kube-apiserver's front-proxy certificate), naming the user in its headers. */
import type { RouteRequest, RouteResponse, UpgradeRequest } from '../../shared/runtime/index.js';
import * as api from './api.js';
import { AUTH_CONFIGMAP, authenticate, parseRequestHeaderConfig, type RemoteUser, type RequestHeaderConfig } from './frontproxy.js';
import type { Ctx, SubresourcesState } from './state.js';

/** The front-proxy configuration as the apiserver publishes it now, or why there is none. */
export function requestHeaderConfig(state: SubresourcesState): RequestHeaderConfig | Error {
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

export type Authenticated = { user: RemoteUser } | { refusal: { status: number; body: object } };

export function who(ctx: Ctx, cert: UpgradeRequest['peerCertificate'], headers: RouteRequest['headersDistinct']): Authenticated {
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
export function guarded(handle: (req: RouteRequest, ctx: Ctx, user: RemoteUser) => Promise<RouteResponse> | RouteResponse) {
  return async (req: RouteRequest, ctx: Ctx): Promise<RouteResponse> => {
    const auth = who(ctx, req.peerCertificate, req.headersDistinct);
    if ('refusal' in auth) return auth.refusal;
    return handle(req, ctx, auth.user);
  };
}
