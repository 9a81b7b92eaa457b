import { z } from 'zod';
import { metricsAuthConfigShape } from '../authz/metrics.js';
import { parseConfig, env } from '../config/index.js';
import { ConfigError, type FieldProblem } from '../errors/index.js';
import type { TlsFiles } from './tls.js';

export type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The host's own keys, read from the same environment as the function's keys. */
export const serverConfigSchema = z.object({
  PORT: env.port(8080).describe('TCP port to listen on; 0 picks a free one (logged at start)'),
  HOST: env.optionalString().describe('Address to bind; unset binds every interface (IPv4 and IPv6)'),
  LOG_LEVEL: z.enum(LOG_LEVELS).optional().describe('Log level of this function; unset keeps the root level (info, or silent under NODE_ENV=test)'),
  BODY_LIMIT_BYTES: env.int(1024 * 1024, 1).describe('Largest request body accepted; larger ones get 413'),
  DRAIN_TIMEOUT_MS: env.int(20_000, 0).describe('On SIGTERM: how long in-flight requests and the shutdown hook may take before the process exits'),
  REQUEST_TIMEOUT_MS: env.int(30_000, 0).describe('How long a client may take to send a whole request (0 disables); guards against slow senders'),
  KEEP_ALIVE_TIMEOUT_MS: env
    .int(120_000, 1)
    .describe(
      "How long an idle keep-alive connection stays open; longer than Go clients' 90 s idle timeout (the apiserver calling webhooks, Knative's queue-proxy), so the client closes first and never sends on a connection the host is closing",
    ),
  // /metrics behind Kubernetes authn/authz (shared/authz): METRICS_AUTH, METRICS_AUTH_RESOURCE_ATTRIBUTES.
  ...metricsAuthConfigShape,
  KUBECONFIG: env.optionalString().describe('Kubeconfig for the /metrics access reviews (METRICS_AUTH=kubernetes); unset: the pod service account'),
});

/** Parsed on their own so that the files are checked even when other keys are wrong. */
export const tlsConfigSchema = z.object({
  TLS_CERT_FILE: env.optionalString().describe('PEM certificate chain; with TLS_KEY_FILE the host serves HTTPS'),
  TLS_KEY_FILE: env.optionalString().describe('PEM private key for TLS_CERT_FILE'),
  TLS_RELOAD_INTERVAL_MS: env.int(10_000, 50).describe('How often the TLS files are read again; a sound new pair is served without a restart'),
});

export const hostConfigSchema = serverConfigSchema.extend(tlsConfigSchema.shape);

export type HostConfig = Readonly<z.infer<typeof hostConfigSchema>>;

export interface StartConfig<Cfg> {
  readonly host: HostConfig;
  readonly fn: Readonly<Cfg>;
  readonly tls: TlsFiles | undefined;
}

/**
 * Parse the host's and the function's keys and read the TLS files, collecting every problem into one
 * ConfigError so that a broken deployment is fixed in one round.
 */
export function loadStartConfig<C extends z.ZodObject>(schema: C, source: Env): StartConfig<z.infer<C>> {
  const problems: FieldProblem[] = [];
  const server = collect(() => parseConfig(serverConfigSchema, source), problems);
  const tlsKeys = collect(() => parseConfig(tlsConfigSchema, source), problems);
  const tls = tlsKeys === undefined ? undefined : collect(() => readTls(tlsKeys), problems);
  const fn = collect(() => parseConfig(schema, source), problems);
  if (problems.length > 0 || server === undefined || tlsKeys === undefined || fn === undefined) {
    throw new ConfigError('invalid configuration', problems);
  }
  return Object.freeze({ host: Object.freeze({ ...server, ...tlsKeys }), fn, tls });
}

function collect<T>(parse: () => T, problems: FieldProblem[]): T | undefined {
  try {
    return parse();
  } catch (err: unknown) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
    return undefined;
  }
}

/**
 * Both files or neither. Their content is not read here: a missing or unusable certificate makes the
 * function not ready (tls.ts), it is not a start failure, because a mounted Secret may be filled later.
 */
function readTls(keys: Readonly<z.infer<typeof tlsConfigSchema>>): TlsFiles | undefined {
  const { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } = keys;
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile !== undefined && keyFile !== undefined) return { certFile, keyFile, reloadMs: keys.TLS_RELOAD_INTERVAL_MS };
  const problems: FieldProblem[] = [];
  if (certFile === undefined) problems.push({ path: 'TLS_CERT_FILE', message: 'required when TLS_KEY_FILE is set' });
  if (keyFile === undefined) problems.push({ path: 'TLS_KEY_FILE', message: 'required when TLS_CERT_FILE is set' });
  throw new ConfigError('invalid TLS configuration', problems);
}
