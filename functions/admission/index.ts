/**
 * The admission function: validating and defaulting webhooks (AdmissionReview v1 over HTTPS) for the
 * module's resources and the `virtualization` ModuleConfig, one route per original webhook path.
 * Deciding lives in rules/ and defaulting/; this file only wires transport, lookups, logs and metrics.
 */
import { BadRequestError } from '../../shared/errors/index.js';
import { KubeClient } from '../../shared/kube/index.js';
import type { Counter } from '../../shared/metrics/index.js';
import { defineFunction, runIfMain, type FunctionDefinition, type Route } from '../../shared/runtime/index.js';
import { CONVERSION_PATH } from '../../shared/api/resources/virtualmachineclass.js';
import { answerReview } from './answer.js';
import { answerConversion } from './conversion.js';
import { admissionConfig, type AdmissionConfig } from './config.js';
import { KubeLookups } from './kube/lookups.js';
import { LookupCache } from '../../shared/cache/lookup-cache.js';
import type { ClusterFacts, Lookups, RuleContext } from './lookups.js';
import { WEBHOOKS, type Webhook } from './webhooks.js';

export interface AdmissionState {
  readonly ctx: RuleContext;
  readonly reviews: Counter<'webhook' | 'result'>;
  readonly close: () => void;
}

/** Where lookups come from: the apiserver by default; tests and benchmarks pass a fake. */
export type LookupsFactory = (config: Readonly<AdmissionConfig>) => { lookups: Lookups; close: () => void };

const kubeLookups: LookupsFactory = (config) => {
  const source = config.KUBECONFIG === undefined ? { inCluster: true } : { kubeconfigPath: config.KUBECONFIG };
  const kube = KubeClient.fromSource(source, { requestTimeoutMs: config.LOOKUP_TIMEOUT_MS });
  const cache = new LookupCache({ ttlMs: config.LOOKUP_CACHE_TTL_MS, staleMs: config.LOOKUP_CACHE_STALE_MS, maxEntries: config.LOOKUP_CACHE_MAX_ENTRIES });
  return { lookups: new KubeLookups(kube, cache), close: () => kube.close() };
};

export function clusterFacts(config: Readonly<AdmissionConfig>): ClusterFacts {
  return {
    edition: config.EDITION,
    podSubnetCIDRs: config.CLUSTER_POD_SUBNET_CIDR,
    serviceSubnetCIDRs: config.CLUSTER_SERVICE_SUBNET_CIDR,
    moduleNamespace: config.MODULE_NAMESPACE,
    dvcrPvcName: config.DVCR_PVC_NAME,
  };
}

/**
 * The apiserver accepts request bodies of up to 3 MiB, and a review of an UPDATE carries the object
 * twice (object and oldObject) plus the envelope; anything larger is not from the apiserver (413).
 */
export const REVIEW_BODY_LIMIT_BYTES = 7 * 1024 * 1024;

function route(webhook: Webhook): Route<AdmissionConfig, AdmissionState> {
  return {
    method: 'post',
    path: webhook.path,
    bodyLimitBytes: REVIEW_BODY_LIMIT_BYTES,
    handle: async (req, { state, log }) => {
      const answered = await answerReview(webhook, req.json(), state.ctx);
      if (!answered.ok) {
        state.reviews.inc({ webhook: webhook.name, result: 'invalid' });
        throw new BadRequestError(answered.message);
      }
      const { decision, failures } = answered.answer;
      for (const f of failures) log.error({ err: f.error, check: f.check, webhook: webhook.name }, 'admission check failed');
      state.reviews.inc({ webhook: webhook.name, result: decision.allowed ? 'allowed' : 'denied' });
      if (log.isLevelEnabled('debug')) {
        log.debug({ webhook: webhook.name, uid: answered.review.response.uid, allowed: decision.allowed, violations: decision.violations.length }, 'reviewed');
      }
      return { body: answered.review };
    },
  };
}

/** The CRD conversion webhook (VirtualMachineClass versions), counted as webhook `convert`. */
const conversionRoute: Route<AdmissionConfig, AdmissionState> = {
  method: 'post',
  path: CONVERSION_PATH,
  bodyLimitBytes: REVIEW_BODY_LIMIT_BYTES,
  handle: (req, { state, log }) => {
    const answered = answerConversion(req.json());
    if (!answered.ok) {
      state.reviews.inc({ webhook: 'convert', result: 'invalid' });
      throw new BadRequestError(answered.message);
    }
    const { result, uid } = answered.review.response;
    state.reviews.inc({ webhook: 'convert', result: result.status === 'Success' ? 'allowed' : 'denied' });
    if (result.status === 'Failure') log.warn({ uid, message: result.message }, 'conversion refused');
    return Promise.resolve({ body: answered.review });
  },
};

/** The function declaration, with lookups from `factory` (the apiserver unless given). */
export function createAdmission(factory: LookupsFactory = kubeLookups): FunctionDefinition<typeof admissionConfig, AdmissionState> {
  return defineFunction({
    name: 'admission',
    config: admissionConfig,
    init: ({ config, metrics }): AdmissionState => {
      const { lookups, close } = factory(config);
      const reviews = metrics.counter({
        name: 'admission_reviews_total',
        help: 'AdmissionReviews answered, by webhook and result (allowed, denied, invalid).',
        labelNames: ['webhook', 'result'],
      });
      return { ctx: { lookups, cluster: clusterFacts(config) }, reviews, close };
    },
    routes: [...WEBHOOKS.map(route), conversionRoute],
    readiness: () => true,
    shutdown: ({ state }) => state.close(),
  });
}

export const admission = createAdmission();

runIfMain(import.meta.url, admission);
