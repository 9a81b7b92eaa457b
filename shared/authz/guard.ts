/**
 * The access guard of an endpoint, as kube-rbac-proxy does it: the bearer token is reviewed by the
 * apiserver (TokenReview), then the user it names is checked for one fixed request
 * (SubjectAccessReview). Verdicts are remembered briefly under the SHA-256 of the token; a failure to
 * get a verdict is never remembered and never lets a request through.
 */
import { createHash } from 'node:crypto';
import { LookupCache } from '../cache/lookup-cache.js';
import { AppError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { describeAttributes, type AccessAttributes } from './reviews.js';
import type { Reviewer } from './reviewer.js';

export type DenialStatus = 401 | 403 | 503;

export type AccessDecision =
  | { readonly allowed: true; readonly user: string }
  | { readonly allowed: false; readonly status: DenialStatus; readonly code: string; readonly message: string };

/** What an endpoint asks before answering. */
export interface RequestGuard {
  /** The decision for a request carrying this Authorization header (never rejects). */
  check(authorization: string | undefined): Promise<AccessDecision>;
  /** Release connections to the apiserver. */
  close(): void;
}

/** The part of shared/cache's LookupCache the guard uses. */
export type VerdictCache = Pick<LookupCache, 'get' | 'clear' | 'size'>;

export interface AccessGuardOptions {
  readonly reviewer: Reviewer;
  readonly attributes: AccessAttributes;
  /** How long an allowed token is remembered. Default 10 s. */
  readonly allowedTtlMs?: number;
  /** How long a rejected or forbidden token is remembered. Default 5 s. */
  readonly deniedTtlMs?: number;
  /** Most tokens remembered; the oldest go first. Default 1024. */
  readonly maxEntries?: number;
  readonly log: Logger;
  /** Milliseconds, monotonic; for tests. */
  readonly now?: () => number;
  /** Where verdicts are kept (with staleMs 0); a LookupCache of its own unless given (tests watch the keys). */
  readonly cache?: VerdictCache;
  /** Called when the guard is closed (e.g. to close the KubeClient behind the reviewer). */
  readonly onClose?: () => void;
}

/** RFC 6750 `Bearer <b64token>`; the scheme is case-insensitive. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The token of a well-formed `Authorization: Bearer` header, else undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
}

/** The cache key of a token: its SHA-256 (hex), so the token itself is never kept. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export const deny = (status: DenialStatus, code: string, message: string): AccessDecision => ({ allowed: false, status, code, message });

const MISSING_TOKEN = deny(401, 'UNAUTHORIZED', 'a bearer token is required (Authorization: Bearer <token>)');

export class AccessGuard implements RequestGuard {
  private readonly verdicts: VerdictCache;
  private readonly allowedTtlMs: number;
  private readonly deniedTtlMs: number;
  private failing = false;

  constructor(private readonly options: AccessGuardOptions) {
    this.allowedTtlMs = options.allowedTtlMs ?? 10_000;
    this.deniedTtlMs = options.deniedTtlMs ?? 5_000;
    // staleMs 0: an expired verdict is never answered, not even while it is read again.
    this.verdicts =
      options.cache ??
      new LookupCache({
        ttlMs: this.allowedTtlMs,
        staleMs: 0,
        maxEntries: options.maxEntries ?? 1024,
        ...(options.now ? { now: options.now } : {}),
      });
  }

  /** How many verdicts are remembered (tests). */
  get cached(): number {
    return this.verdicts.size;
  }

  async check(authorization: string | undefined): Promise<AccessDecision> {
    const token = bearerToken(authorization);
    if (token === undefined) return MISSING_TOKEN;
    try {
      const decision = await this.verdicts.get(
        tokenKey(token),
        () => this.review(token),
        (d: AccessDecision) => (d.allowed ? this.allowedTtlMs : this.deniedTtlMs),
      );
      this.reviewed();
      return decision;
    } catch (err: unknown) {
      return this.failed(err);
    }
  }

  close(): void {
    this.verdicts.clear();
    this.options.onClose?.();
  }

  private async review(token: string): Promise<AccessDecision> {
    const { reviewer, attributes } = this.options;
    const user = await reviewer.authenticate(token);
    if (user === undefined) return deny(401, 'UNAUTHORIZED', 'the bearer token was not accepted by the Kubernetes API');
    const verdict = await reviewer.authorize(user, attributes);
    const name = user.username ?? '';
    if (!verdict.allowed) {
      const reason = verdict.reason ? ` (${verdict.reason})` : '';
      return deny(403, 'FORBIDDEN', `${name} may not ${describeAttributes(attributes)}${reason}`);
    }
    return { allowed: true, user: name };
  }

  /** One warning when reviews start failing, not one per scrape; one line when they work again. */
  private failed(err: unknown): AccessDecision {
    if (!this.failing) this.options.log.warn({ err }, 'cannot review a request with the Kubernetes API; answering 503 until it works again');
    else this.options.log.debug({ err }, 'review failed');
    this.failing = true;
    const code = err instanceof AppError ? err.code : 'INTERNAL';
    return deny(503, 'UNAVAILABLE', `the Kubernetes API could not review the request (${code}); try again later`);
  }

  private reviewed(): void {
    if (!this.failing) return;
    this.failing = false;
    this.options.log.info('reviews with the Kubernetes API work again');
  }
}

/**
 * A guard for a unit that cannot reach the apiserver at all (no kubeconfig, not in a pod): no token is
 * still 401, anything else 503 with `message`.
 */
export function unavailableGuard(message: string): RequestGuard {
  return {
    check: (authorization) => Promise.resolve(bearerToken(authorization) === undefined ? MISSING_TOKEN : deny(503, 'UNAVAILABLE', message)),
    close: () => undefined,
  };
}

export interface DenialReply {
  readonly status: DenialStatus;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The HTTP answer of a denial: JSON `{"error":{code,message}}`, and `WWW-Authenticate` on 401. */
export function denialReply(decision: Extract<AccessDecision, { allowed: false }>): DenialReply {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (decision.status === 401) headers['www-authenticate'] = 'Bearer realm="kubernetes"';
  if (decision.status === 503) headers['retry-after'] = '5';
  return { status: decision.status, headers, body: JSON.stringify({ error: { code: decision.code, message: decision.message } }) };
}
