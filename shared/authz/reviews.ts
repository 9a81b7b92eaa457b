/**
 * The two review objects the guard sends to the apiserver, as zod schemas of what comes back and
 * builders of what goes out: TokenReview (authentication.k8s.io/v1: who holds this token?) and
 * SubjectAccessReview (authorization.k8s.io/v1: may that user do this?).
 */
import { z } from 'zod';

export const TOKEN_REVIEWS_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
export const SUBJECT_ACCESS_REVIEWS_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/** authentication.k8s.io/v1 UserInfo: what a TokenReview reports and a SubjectAccessReview asks about. */
export const userInfoSchema = z.looseObject({
  username: z.string().optional(),
  uid: z.string().optional(),
  groups: z.array(z.string()).optional(),
  extra: z.record(z.string(), z.array(z.string())).optional(),
});
export type UserInfo = z.infer<typeof userInfoSchema>;

export const tokenReviewSchema = z.looseObject({
  apiVersion: z.literal('authentication.k8s.io/v1'),
  kind: z.literal('TokenReview'),
  status: z
    .looseObject({
      authenticated: z.boolean().optional(),
      user: userInfoSchema.optional(),
      audiences: z.array(z.string()).optional(),
      error: z.string().optional(),
    })
    .optional(),
});
export type TokenReview = z.infer<typeof tokenReviewSchema>;

export const subjectAccessReviewSchema = z.looseObject({
  apiVersion: z.literal('authorization.k8s.io/v1'),
  kind: z.literal('SubjectAccessReview'),
  status: z.looseObject({
    allowed: z.boolean(),
    denied: z.boolean().optional(),
    reason: z.string().optional(),
    evaluationError: z.string().optional(),
  }),
});
export type SubjectAccessReview = z.infer<typeof subjectAccessReviewSchema>;

/** A request for a non-resource URL, e.g. `get /metrics`. */
export interface NonResourceAttributes {
  readonly path: string;
  readonly verb: string;
}

/** A request on a resource, e.g. `get services/proxy controller-metrics` in a namespace. */
export interface ResourceAttributes {
  readonly verb: string;
  readonly namespace?: string;
  readonly group?: string;
  readonly version?: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly name?: string;
}

/** What the guard asks the authorizer: one of the two forms of a SubjectAccessReview spec. */
export type AccessAttributes = { readonly nonResourceAttributes: NonResourceAttributes } | { readonly resourceAttributes: ResourceAttributes };

/** `get /metrics`, or `get services/proxy name in namespace`: for messages. */
export function describeAttributes(attributes: AccessAttributes): string {
  if ('nonResourceAttributes' in attributes) return `${attributes.nonResourceAttributes.verb} ${attributes.nonResourceAttributes.path}`;
  const r = attributes.resourceAttributes;
  const resource = [r.resource, r.subresource].filter((s) => s !== undefined && s !== '').join('/');
  const group = r.group ? `.${r.group}` : '';
  return `${r.verb} ${resource}${group}${r.name ? ` ${r.name}` : ''}${r.namespace ? ` in ${r.namespace}` : ''}`;
}

export function tokenReviewRequest(token: string, audiences?: readonly string[]): Record<string, unknown> {
  const spec = audiences === undefined || audiences.length === 0 ? { token } : { token, audiences: [...audiences] };
  return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec };
}

export function subjectAccessReviewRequest(user: UserInfo, attributes: AccessAttributes): Record<string, unknown> {
  const spec: Record<string, unknown> = { user: user.username ?? '', ...attributes };
  if (user.uid !== undefined) spec['uid'] = user.uid;
  if (user.groups !== undefined) spec['groups'] = user.groups;
  if (user.extra !== undefined) spec['extra'] = user.extra;
  return { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec };
}
