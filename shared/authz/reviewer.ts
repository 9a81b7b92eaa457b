import type { z } from 'zod';
import { zodProblems } from '../config/index.js';
import { InvalidObjectError, type RestRequest } from '../kube/index.js';
import {
  SUBJECT_ACCESS_REVIEWS_PATH,
  TOKEN_REVIEWS_PATH,
  subjectAccessReviewRequest,
  subjectAccessReviewSchema,
  tokenReviewRequest,
  tokenReviewSchema,
  type AccessAttributes,
  type UserInfo,
} from './reviews.js';

export interface AccessVerdict {
  readonly allowed: boolean;
  /** The authorizer's reason, when it gave one. */
  readonly reason: string | undefined;
}

/**
 * The guard's narrow port to the apiserver. Both calls throw when no answer could be had (unreachable,
 * 5xx, a refused review, an unreadable answer); a verdict is never made up.
 */
export interface Reviewer {
  /** The user the token belongs to, or undefined when the apiserver does not accept the token. */
  authenticate(token: string): Promise<UserInfo | undefined>;
  /** Whether that user may do what `attributes` describe. */
  authorize(user: UserInfo, attributes: AccessAttributes): Promise<AccessVerdict>;
}

/** The part of shared/kube's RestTransport the reviewer uses. */
export interface RestPort {
  request(req: RestRequest): Promise<unknown>;
}

export interface KubeReviewerOptions {
  /** Deadline of one review request. Default 5 s (scrapes usually time out after 10 s). */
  readonly timeoutMs?: number;
  /** Audiences the token must be meant for (TokenReview spec.audiences); unset: the apiserver's. */
  readonly audiences?: readonly string[];
}

/** TokenReview and SubjectAccessReview POSTed through the unit's own KubeClient transport. */
export class KubeReviewer implements Reviewer {
  private readonly timeoutMs: number;

  constructor(
    private readonly rest: RestPort,
    private readonly options: KubeReviewerOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  async authenticate(token: string): Promise<UserInfo | undefined> {
    const body = await this.rest.request({
      method: 'POST',
      path: TOKEN_REVIEWS_PATH,
      body: tokenReviewRequest(token, this.options.audiences),
      timeoutMs: this.timeoutMs,
      what: 'create TokenReview',
    });
    const status = parse(tokenReviewSchema, body, 'TokenReview').status;
    return status?.authenticated === true && status.user !== undefined ? status.user : undefined;
  }

  async authorize(user: UserInfo, attributes: AccessAttributes): Promise<AccessVerdict> {
    const body = await this.rest.request({
      method: 'POST',
      path: SUBJECT_ACCESS_REVIEWS_PATH,
      body: subjectAccessReviewRequest(user, attributes),
      timeoutMs: this.timeoutMs,
      what: `create SubjectAccessReview for ${user.username ?? ''}`,
    });
    const { status } = parse(subjectAccessReviewSchema, body, 'SubjectAccessReview');
    return { allowed: status.allowed && status.denied !== true, reason: status.reason };
  }
}

function parse<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw new InvalidObjectError(`${what} answer`, zodProblems(result.error));
  return result.data;
}
