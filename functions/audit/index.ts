/**
 * The audit function: Kubernetes audit events in (Vector, CloudEvents, the apiserver audit webhook),
 * enriched security records out (stdout, and K_SINK when a SinkBinding sets it). See README.md.
 */
import { AUDIT_SENDER, UNCHECKED_SENDER, senderGuardFromEnv, type SenderGuard } from '../../shared/authz/index.js';
import { KubeClient } from '../../shared/kube/index.js';
import type { Logger } from '../../shared/log/index.js';
import { defineFunction, runIfMain, type FunctionDefinition, type InitContext } from '../../shared/runtime/index.js';
import { auditConfigSchema, type AuditConfig } from './config.js';
import { DuplicateFilter } from './dedup.js';
import { noEnrichment, type Enrichment } from './enrichment.js';
import { KubeEnrichment } from './kube-enrichment.js';
import { auditMetrics, type AuditMetrics } from './metrics.js';
import { recordWriter, type LineDestination } from './output.js';
import { AuditService } from './service.js';
import { CloudEventSink } from './sink.js';
import { auditCloudEventHandler, auditRoutes } from './transport.js';

/** How long shutdown waits for records still on their way to K_SINK. */
const SINK_DRAIN_MS = 5_000;

export interface AuditState {
  readonly service: AuditService;
  /** Who may send audit events; undefined with SENDER_AUTH=none. */
  readonly senders: SenderGuard | undefined;
  readonly stop: () => Promise<void>;
}

/** Replacements for tests and benchmarks: an in-memory enrichment, a line buffer instead of stdout. */
export interface AuditOverrides {
  readonly enrichment?: Enrichment;
  readonly destination?: LineDestination;
}

function sinkFor(config: AuditConfig, metrics: AuditMetrics, log: Logger): CloudEventSink | undefined {
  if (config.K_SINK === undefined) return undefined;
  return new CloudEventSink({
    url: config.K_SINK,
    source: config.AUDIT_CE_SOURCE,
    extensions: config.K_CE_OVERRIDES,
    maxAttempts: config.AUDIT_SINK_MAX_ATTEMPTS,
    concurrency: config.AUDIT_SINK_CONCURRENCY,
    queueLimit: config.AUDIT_SINK_QUEUE_LIMIT,
    timeoutMs: config.AUDIT_SINK_TIMEOUT_MS,
    backoff: { initialMs: 200, maxMs: 5_000, jitter: 0.2 },
    log: log.child({ output: 'sink' }),
    onResult: (result) => metrics.sink.inc({ result }),
  });
}

/** Informers start with the first batch, which waits for them up to AUDIT_SYNC_WAIT_MS; later ones never wait. */
function firstUse(kube: KubeEnrichment, config: AuditConfig, log: Logger): () => Promise<void> {
  let warm: Promise<void> | undefined;
  return () =>
    (warm ??= kube.ready(config.AUDIT_SYNC_WAIT_MS).then((synced) => {
      if (!synced) log.warn({ waitedMs: config.AUDIT_SYNC_WAIT_MS }, 'informers not synced yet; records carry unknown fields until they are');
    }));
}

function init(overrides: AuditOverrides): (ctx: InitContext<AuditConfig>) => AuditState {
  return ({ config, log, metrics: registry }) => {
    const metrics = auditMetrics(registry);
    const kube =
      overrides.enrichment === undefined && config.AUDIT_ENRICHMENT === 'kube'
        ? new KubeEnrichment({
            client: KubeClient.fromSource({ kubeconfigPath: config.KUBECONFIG }),
            log: log.child({ part: 'enrichment' }),
            deletedTtlMs: config.AUDIT_DELETED_TTL_MS,
            adminTtlMs: config.AUDIT_ADMIN_TTL_MS,
          })
        : undefined;
    const sink = sinkFor(config, metrics, log);
    const service = new AuditService({
      enrichment: overrides.enrichment ?? kube ?? noEnrichment,
      prepare: kube === undefined ? undefined : firstUse(kube, config, log),
      writer: recordWriter(overrides.destination),
      sink,
      duplicates: new DuplicateFilter({ ttlMs: config.AUDIT_DEDUP_TTL_MS, capacity: config.AUDIT_DEDUP_CAPACITY }),
      metrics,
      limits: { maxLineBytes: config.AUDIT_MAX_LINE_BYTES },
      log,
    });
    const senders = senderGuardFromEnv(config, { attributes: AUDIT_SENDER, what: 'send audit events', env: process.env, metrics: registry, log });
    const stop = async (): Promise<void> => {
      senders?.close();
      await sink?.drain(SINK_DRAIN_MS);
      await kube?.stop();
    };
    return { service, senders, stop };
  };
}

export function createAuditFunction(overrides: AuditOverrides = {}): FunctionDefinition<typeof auditConfigSchema, AuditState> {
  return defineFunction({
    name: 'audit',
    config: auditConfigSchema,
    init: init(overrides),
    // Every input (/vector, /audit-webhook, CloudEvents on /) is refused before its body is read unless the sender may create auditevents.
    senders: (request, { state }) => state.senders?.verdict(request) ?? UNCHECKED_SENDER,
    routes: auditRoutes<AuditConfig, AuditState>(),
    handle: auditCloudEventHandler<AuditConfig, AuditState>(),
    shutdown: (ctx) => ctx.state.stop(),
  });
}

export const auditFunction = createAuditFunction();

runIfMain(import.meta.url, auditFunction);
