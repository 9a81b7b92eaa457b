/**
 * `/metrics` behind Kubernetes authentication and authorization: the config keys every unit shares
 * and the guard built from them.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { errorMessage } from '../errors/index.js';
import { KubeClient } from '../kube/index.js';
import type { Logger } from '../log/index.js';
import { AccessGuard, unavailableGuard, type RequestGuard } from './guard.js';
import type { AccessAttributes, ResourceAttributes } from './reviews.js';
import { KubeReviewer, type RestPort } from './reviewer.js';

export const METRICS_AUTH_MODES = ['kubernetes', 'none'] as const;
export type MetricsAuthMode = (typeof METRICS_AUTH_MODES)[number];

/** What kube-rbac-proxy checks by default: may the user `get` the non-resource URL `/metrics`. */
export const METRICS_ATTRIBUTES: AccessAttributes = { nonResourceAttributes: { path: '/metrics', verb: 'get' } };

const RESOURCE_KEYS = ['namespace', 'group', 'version', 'resource', 'subresource', 'name'] as const;

/**
 * `namespace=d8-virtualization,resource=services,subresource=proxy,name=controller-metrics` into
 * resource attributes with verb `get`; a list of problems when it is not one.
 */
export function parseResourceAttributes(text: string): ResourceAttributes | string[] {
  const problems: string[] = [];
  const attrs: Record<string, string> = {};
  for (const pair of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq).trim();
    if (eq < 0 || !(RESOURCE_KEYS as readonly string[]).includes(key)) {
      problems.push(`\`${pair}\` is not key=value with a key of ${RESOURCE_KEYS.join(', ')}`);
    } else if (key in attrs) {
      problems.push(`${key} is given twice`);
    } else {
      attrs[key] = pair.slice(eq + 1).trim();
    }
  }
  if (!attrs['resource']) problems.push('resource is required');
  if (problems.length > 0) return problems;
  const out: Record<string, string> = { verb: 'get' };
  for (const key of RESOURCE_KEYS) if (attrs[key]) out[key] = attrs[key];
  return out as unknown as ResourceAttributes;
}

const resourceAttributesEnv = z
  .string()
  .optional()
  .transform((text, ctx): ResourceAttributes | undefined => {
    if (text === undefined) return undefined;
    const parsed = parseResourceAttributes(text);
    if (!Array.isArray(parsed)) return parsed;
    for (const message of parsed) ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  });

/** The keys of every unit that serves `/metrics` (the function host and the controller). */
export const metricsAuthConfigShape = {
  METRICS_AUTH: z
    .enum(METRICS_AUTH_MODES)
    .default('kubernetes')
    .describe(
      'kubernetes: /metrics needs a bearer token the apiserver accepts (TokenReview) whose user may get /metrics (SubjectAccessReview), as kube-rbac-proxy does; none: /metrics is open (tests, local runs)',
    ),
  METRICS_AUTH_RESOURCE_ATTRIBUTES: resourceAttributesEnv.describe(
    'Authorize a resource request instead of the URL /metrics (kube-rbac-proxy --resource-attributes): comma-separated key=value, keys namespace, group, version, resource (required), subresource, name; verb get. Unset: get on /metrics',
  ),
};

export interface MetricsAuthSettings {
  readonly METRICS_AUTH: MetricsAuthMode;
  readonly METRICS_AUTH_RESOURCE_ATTRIBUTES: ResourceAttributes | undefined;
}

export function metricsAttributes(settings: MetricsAuthSettings): AccessAttributes {
  const resource = settings.METRICS_AUTH_RESOURCE_ATTRIBUTES;
  return resource === undefined ? METRICS_ATTRIBUTES : { resourceAttributes: resource };
}

/**
 * The guard of `/metrics` for a unit that already holds a KubeClient (the controller); undefined when
 * METRICS_AUTH is `none`. The caller keeps owning the client.
 */
export function metricsGuard(settings: MetricsAuthSettings, kube: { readonly rest: RestPort }, log: Logger): RequestGuard | undefined {
  if (settings.METRICS_AUTH === 'none') return undefined;
  return new AccessGuard({ reviewer: new KubeReviewer(kube.rest), attributes: metricsAttributes(settings), log });
}

export type EnvSource = Readonly<Record<string, string | undefined>>;

export const SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * The guard of the function host, which has no client of its own: one is built from `KUBECONFIG`, or
 * else from the pod's service account. When neither is there, the problem is logged once and every
 * request with a token gets 503 naming it (the function itself keeps serving). Closing the guard
 * closes that client.
 */
export function metricsGuardFromEnv(
  settings: MetricsAuthSettings & { readonly KUBECONFIG: string | undefined },
  env: EnvSource,
  log: Logger,
): RequestGuard | undefined {
  if (settings.METRICS_AUTH === 'none') return undefined;
  return reviewingGuardFromEnv({ kubeconfigPath: settings.KUBECONFIG, env, log, attributes: metricsAttributes(settings), setting: 'METRICS_AUTH' });
}

/**
 * An AccessGuard for a unit without a client of its own: one is built from `kubeconfigPath`, or else
 * from the pod's service account, and closed with the guard. When neither is there, the problem is
 * logged once and every request with a token gets 503 naming it (the unit itself keeps serving).
 */
export function reviewingGuardFromEnv(o: {
  readonly kubeconfigPath: string | undefined;
  readonly env: EnvSource;
  readonly log: Logger;
  readonly attributes: AccessAttributes;
  /** The key that turns the guard off, named in the message. */
  readonly setting: string;
  readonly audiences?: readonly string[] | undefined;
}): RequestGuard {
  let kube: KubeClient;
  try {
    kube = kubeClientFor(o.kubeconfigPath, o.env);
  } catch (err: unknown) {
    const message = `${o.setting}=kubernetes but there is no Kubernetes API to review requests with: ${errorMessage(err)}; set KUBECONFIG, run in a pod, or set ${o.setting}=none`;
    o.log.error({ err }, message);
    return unavailableGuard(message);
  }
  const reviewer = new KubeReviewer(kube.rest, o.audiences === undefined ? {} : { audiences: o.audiences });
  return new AccessGuard({ reviewer, attributes: o.attributes, log: o.log, onClose: () => kube.close() });
}

/** The unit's client for reviews: `KUBECONFIG`, else the pod's service account; throws naming what is missing. */
export function kubeClientFor(kubeconfigPath: string | undefined, env: EnvSource): KubeClient {
  if (kubeconfigPath !== undefined) {
    try {
      return KubeClient.fromSource({ kubeconfigPath });
    } catch (err: unknown) {
      throw new Error(`KUBECONFIG ${kubeconfigPath} cannot be loaded (${errorMessage(err)})`, { cause: err });
    }
  }
  if (!env['KUBERNETES_SERVICE_HOST'] || !existsSync(SERVICE_ACCOUNT_TOKEN_FILE)) {
    throw new Error(`KUBECONFIG is unset and this is not a pod with a service account (KUBERNETES_SERVICE_HOST or ${SERVICE_ACCOUNT_TOKEN_FILE} missing)`);
  }
  return KubeClient.fromSource({ inCluster: true });
}
