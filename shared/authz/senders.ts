/**
 * Who may send a function what it records or acts on (audit events, pre-delete CloudEvents): the
 * request's bearer token is reviewed by the apiserver (TokenReview, with the audience Knative's
 * sender identity uses when one is configured), and its user must be allowed `create` on the
 * function's virtual resource (SubjectAccessReview), e.g. `auditevents.virtualization.deckhouse.io`.
 * The same AccessGuard and cache as `/metrics`; this file adds the per-function resource, the
 * config keys, the metric and a log line once per source. Only headers are looked at, so a
 * denied request is answered before its body is read.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { Counter, Registry } from '../metrics/index.js';
import { denialReply, type AccessDecision, type DenialReply, type RequestGuard } from './guard.js';
import { reviewingGuardFromEnv, type EnvSource } from './metrics.js';
import type { ResourceAttributes } from './reviews.js';

/** The API group of the virtual resources senders are authorized on (no CRD serves them). */
export const SENDER_GROUP = 'virtualization.deckhouse.io';

/** `create auditevents`: Vector, the apiserver's audit webhook and the audit CloudEvents' senders. */
export const AUDIT_SENDER: ResourceAttributes = { verb: 'create', group: SENDER_GROUP, resource: 'auditevents' };
/** `create predeleteevents`: whoever delivers the ModuleConfig CloudEvents to pre-delete. */
export const PRE_DELETE_SENDER: ResourceAttributes = { verb: 'create', group: SENDER_GROUP, resource: 'predeleteevents' };

export const SENDER_AUTH_MODES = ['kubernetes', 'none'] as const;

const audiences = z
  .string()
  .optional()
  .transform((text) =>
    text === undefined
      ? undefined
      : text
          .split(',')
          .map((a) => a.trim())
          .filter((a) => a !== ''),
  );

/** The keys of a function whose inputs need an authenticated sender. */
export const senderAuthConfigShape = {
  SENDER_AUTH: z
    .enum(SENDER_AUTH_MODES)
    .default('kubernetes')
    .describe(
      "kubernetes: every input needs a bearer token the apiserver accepts (TokenReview) whose user may create the function's virtual resource (SubjectAccessReview); none: inputs are open (tests only)",
    ),
  SENDER_AUDIENCES: audiences.describe(
    "Comma-separated audiences a sender's token may be meant for (TokenReview spec.audiences), e.g. the audience Knative Eventing's OIDC sender identity requests; unset: the apiserver's own",
  ),
};

export interface SenderAuthSettings {
  readonly SENDER_AUTH: (typeof SENDER_AUTH_MODES)[number];
  readonly SENDER_AUDIENCES: readonly string[] | undefined;
  readonly KUBECONFIG: string | undefined;
}

/** What the check reads of a request: headers only. */
export interface SenderRequest {
  readonly headers: IncomingHttpHeaders;
  /** The peer's address, for the log line once per source. */
  readonly remoteAddress: string | undefined;
}

/** The sender's user name, or the JSON denial (401 with `WWW-Authenticate`, 403, 503 with `Retry-After`). */
export type SenderVerdict = { readonly sender: string } | { readonly refused: DenialReply };

/** The verdict when SENDER_AUTH is `none`: nobody was checked, and the name says so. */
export const UNCHECKED_SENDER: SenderVerdict = Object.freeze({ sender: 'unchecked (SENDER_AUTH=none)' });

export type SenderResult = 'allowed' | 'unauthenticated' | 'forbidden' | 'unavailable';
const RESULT: Record<number, SenderResult> = { 401: 'unauthenticated', 403: 'forbidden', 503: 'unavailable' };

/** Sources remembered for "logged once"; past this the set starts again (a flood of new sources logs at debug). */
const LOGGED_SOURCES = 1024;

export interface SenderGuardOptions {
  readonly guard: RequestGuard;
  /** What the sender wanted to do, for log lines (`send audit events`). */
  readonly what: string;
  readonly metrics: Registry;
  readonly log: Logger;
}

/** The check of one function's senders, counted in `sender_checks_total{result}`. */
export class SenderGuard {
  private readonly checks: Counter<'result'>;
  private readonly logged = new Set<string>();

  constructor(private readonly options: SenderGuardOptions) {
    this.checks = options.metrics.counter({
      name: 'sender_checks_total',
      help: 'Checks of the sender of an input (audit events, pre-delete CloudEvents) by result: allowed, unauthenticated (401), forbidden (403), unavailable (503)',
      labelNames: ['result'],
    });
  }

  async check(request: SenderRequest): Promise<AccessDecision> {
    const authorization = request.headers.authorization;
    const decision = await this.options.guard.check(authorization);
    if (decision.allowed) {
      this.checks.inc({ result: 'allowed' });
      return decision;
    }
    const result = RESULT[decision.status] ?? 'unavailable';
    this.checks.inc({ result });
    this.logOnce(sourceOf(request), result, decision.message);
    return decision;
  }

  /** The check as the function host's `senders` hook wants it: the sender's name, or the denial to answer. */
  async verdict(request: SenderRequest): Promise<SenderVerdict> {
    const decision = await this.check(request);
    return decision.allowed ? { sender: decision.user } : { refused: denialReply(decision) };
  }

  close(): void {
    this.options.guard.close();
  }

  private logOnce(source: string, result: SenderResult, message: string): void {
    const key = `${result} ${source}`;
    if (this.logged.has(key)) {
      this.options.log.debug({ source, result }, `refused a request to ${this.options.what}`);
      return;
    }
    if (this.logged.size >= LOGGED_SOURCES) this.logged.clear();
    this.logged.add(key);
    this.options.log.warn({ source, result, reason: message }, `refused a request to ${this.options.what} (logged once per source and result)`);
  }
}

/** The sender's address: the first X-Forwarded-For hop (Knative's queue-proxy adds it), else the peer. */
function sourceOf(request: SenderRequest): string {
  const forwarded = request.headers['x-forwarded-for'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first !== undefined && first !== '' ? first : (request.remoteAddress ?? 'unknown');
}

/**
 * The guard of a function's senders from its settings; undefined when SENDER_AUTH is `none`. Its
 * own client comes from KUBECONFIG or the pod's service account (see `reviewingGuardFromEnv`).
 */
export function senderGuardFromEnv(
  settings: SenderAuthSettings,
  o: { readonly attributes: ResourceAttributes; readonly what: string; readonly env: EnvSource; readonly metrics: Registry; readonly log: Logger },
): SenderGuard | undefined {
  if (settings.SENDER_AUTH === 'none') return undefined;
  const guard = reviewingGuardFromEnv({
    kubeconfigPath: settings.KUBECONFIG,
    env: o.env,
    log: o.log,
    attributes: { resourceAttributes: o.attributes },
    setting: 'SENDER_AUTH',
    audiences: settings.SENDER_AUDIENCES,
  });
  return new SenderGuard({ guard, what: o.what, metrics: o.metrics, log: o.log });
}
