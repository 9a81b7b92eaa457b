import { z } from 'zod';
import { metricsAuthConfigShape } from '../../shared/authz/metrics.js';
import { env, parseConfig } from '../../shared/config/index.js';

const bytes = (fallback: number) => z.coerce.number().int().min(1024).default(fallback);

/** Environment of kube-api-rewriter: every key documented, with a default. */
export const ApiRewriterConfigSchema = z.object({
  KUBECONFIG: env
    .optionalString()
    .describe('Kubeconfig of the apiserver behind the proxy (its credentials are the ones the proxy uses); in-cluster service account when unset.'),
  PROXY_HOST: env
    .string('127.0.0.1')
    .describe('Address the proxy listens on (plain HTTP, no authentication: keep it on loopback, as the original sidecar does).'),
  PROXY_PORT: env.port(23915).describe('Port of the proxy (the original: 23915); 0 picks a free one.'),
  MAX_REQUEST_BODY_BYTES: bytes(16 * 1024 * 1024).describe('Largest request body the proxy reads to rewrite (larger: 413).'),
  MAX_RESPONSE_BODY_BYTES: bytes(512 * 1024 * 1024).describe('Largest non-watch response the proxy reads to rewrite (larger: 502 naming the limit).'),
  WEBHOOK_ADDRESS: env
    .optionalString()
    .refine((v) => v === undefined || /^https:\/\/[^/]+\/?$/.test(v), "must be https://host:port of KubeVirt's webhook server")
    .describe(
      "KubeVirt's webhook server (e.g. https://127.0.0.1:9443); when set, the webhook proxy runs (its certificate is not verified: a local peer, as in the original).",
    ),
  WEBHOOK_PROXY_HOST: env.string('0.0.0.0').describe('Address the webhook proxy listens on (HTTPS; the apiserver calls it).'),
  WEBHOOK_PROXY_PORT: env.port(24192).describe('Port of the webhook proxy (the original: 24192); 0 picks a free one.'),
  WEBHOOK_CERT_FILE: env.string('/etc/webhook-certificates/tls.crt').describe('Serving certificate of the webhook proxy (PEM), re-read every 10 s.'),
  WEBHOOK_KEY_FILE: env.string('/etc/webhook-certificates/tls.key').describe('Its private key (PEM).'),
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
