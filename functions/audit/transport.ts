/**
 * Framing of the three inputs: Vector's http sink and the apiserver audit webhook as plain routes
 * answering with a summary of what was accepted, and CloudEvents (binary, structured, batched) through
 * the host's `handle`, which can only answer 204 or an error.
 */
import { BadRequestError } from '../../shared/errors/index.js';
import type { CloudEventHandler, Route, RouteResponse } from '../../shared/runtime/index.js';
import type { InputName } from './metrics.js';
import type { BatchSummary } from './pipeline.js';
import type { AuditService } from './service.js';

/** Vector's `http` sink (JSON array or NDJSON of log events; static ce-* headers are allowed and ignored). */
export const VECTOR_PATH = '/vector';
/** The kube-apiserver audit webhook backend (an audit.k8s.io/v1 EventList per POST). */
export const WEBHOOK_PATH = '/audit-webhook';
/** apiserver batches of 400 events with request and response objects exceed the host's 1 MiB default. */
export const ROUTE_BODY_LIMIT_BYTES = 64 * 1024 * 1024;
/** At most this many rejections are listed in an answer (all are counted and logged). */
const LISTED_REJECTIONS = 100;

export interface HasService {
  readonly service: AuditService;
}

/** What the sender is told: counts, and the first rejections with index and reason. */
export function summaryBody(summary: BatchSummary): Record<string, unknown> {
  return {
    received: summary.received,
    accepted: summary.accepted,
    rejected: summary.rejected.length,
    records: summary.records,
    duplicates: summary.duplicates,
    ignored: summary.ignored,
    undecided: summary.undecided,
    rejections: summary.rejected.slice(0, LISTED_REJECTIONS),
  };
}

/** Nothing accepted out of something received is the sender's fault (400, not retried); else 200. */
function nothingAccepted(summary: BatchSummary): boolean {
  return summary.received > 0 && summary.accepted === 0;
}

function route<Cfg, S extends HasService>(path: string, input: InputName): Route<Cfg, S> {
  return {
    method: 'post',
    path,
    bodyLimitBytes: ROUTE_BODY_LIMIT_BYTES,
    handle: async (req, ctx): Promise<RouteResponse> => {
      const summary = await ctx.state.service.processBody(input, req.body, () => ctx.log);
      return { status: nothingAccepted(summary) ? 400 : 200, body: summaryBody(summary) };
    },
  };
}

export function auditRoutes<Cfg, S extends HasService>(): ReadonlyArray<Route<Cfg, S>> {
  return [route(VECTOR_PATH, 'vector'), route(WEBHOOK_PATH, 'webhook')];
}

/** CloudEvents whose data is a Vector batch (binary mode from Vector), an audit Event or an EventList. */
export function auditCloudEventHandler<Cfg, S extends HasService>(): CloudEventHandler<Cfg, S> {
  return async (event, ctx) => {
    const data = event.data;
    const service = ctx.state.service;
    const summary =
      typeof data === 'string' || Buffer.isBuffer(data)
        ? await service.processBody('cloudevent', data, () => ctx.log)
        : await service.processValue('cloudevent', data, () => ctx.log);
    if (nothingAccepted(summary)) {
      const reasons = [...new Set(summary.rejected.map((r) => r.reason))].join(', ');
      throw new BadRequestError(`no audit event accepted from CloudEvent ${event.id} (${summary.rejected.length} rejected: ${reasons})`);
    }
  };
}
