import { z } from 'zod';
import { metricsAuthConfigShape } from '../../shared/authz/metrics.js';
import { env, parseConfig } from '../../shared/config/index.js';

const bytes = (fallback: number) => z.coerce.number().int().min(1024).default(fallback);

/** Environment of kube-api-rewriter: every key documented, with a default. */
export const ApiRewriterConfigSchema = z.object({
  KUBECONFIG: env.optionalString().describe('Kubeconfig of the apiserver behind the proxy (its credentials are the ones the proxy uses); in-cluster service account when unset.'),
  PROXY_HOST: env.string('127.0.0.1').describe('Address the proxy listens on (plain HTTP, no authentication: keep it on loopback, as the original sidecar does).'),
  PROXY_PORT: env.port(23915).describe('Port of the proxy (the original: 23915); 0 picks a free one.'),
  MAX_REQUEST_BODY_BYTES: bytes(16 * 1024 * 1024).describe('Largest request body the proxy reads to rewrite (larger: 413).'),
  MAX_RESPONSE_BODY_BYTES: bytes(512 * 1024 * 1024).describe('Largest non-watch response the proxy reads to rewrite (larger: 502 naming the limit).'),
  HEALTH_PORT: env.port(9090).describe('Port of /health/liveness, /health/readiness and /metrics (the original: 9090); 0 picks a free one.'),
  HEALTH_HOST: env.string('0.0.0.0').describe('Address the health and metrics server listens on.'),
  ...metricsAuthConfigShape,
  LOG_LEVEL: env.logLevel().describe('Log level.'),
});

export type ApiRewriterConfig = Readonly<z.infer<typeof ApiRewriterConfigSchema>>;

/** Parse the environment once into a frozen config; every problem is reported together. */
export function loadConfig(source: Readonly<Record<string, string | undefined>> = process.env): ApiRewriterConfig {
  return parseConfig(ApiRewriterConfigSchema, source);
}
