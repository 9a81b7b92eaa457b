/**
 * Is a user an administrator of the module? Asked of the apiserver with SubjectAccessReviews: may the
 * user update ModuleConfigs (deckhouse.io), or else VirtualMachineClasses (virtualization.deckhouse.io)?
 * Answers are remembered per user and groups for a short while; failures are not remembered.
 */
import { LookupCache } from '../../shared/cache/lookup-cache.js';
import type { Logger } from '../../shared/log/index.js';
import type { RestRequest } from '../../shared/kube/index.js';
import type { UserRef } from './enrichment.js';

/** The checks, in order; the first allowed one decides. */
export const ADMIN_CHECKS = [
  { verb: 'update', group: 'deckhouse.io', version: 'v1alpha1', resource: 'moduleconfigs' },
  { verb: 'update', group: 'virtualization.deckhouse.io', version: 'v1alpha2', resource: 'virtualmachineclasses' },
] as const;

export type RestCall = (req: RestRequest) => Promise<unknown>;

export interface AdminCheckOptions {
  readonly call: RestCall;
  readonly ttlMs: number;
  readonly log: Logger;
  readonly now?: () => number;
  /** Most users remembered. */
  readonly capacity?: number;
}

function allowedOf(response: unknown): boolean {
  const status = (response as { status?: { allowed?: unknown } } | undefined)?.status;
  return status?.allowed === true;
}

export class AdminCheck {
  private readonly memo: LookupCache;

  constructor(private readonly options: AdminCheckOptions) {
    this.memo = new LookupCache({
      ttlMs: options.ttlMs,
      maxEntries: options.capacity ?? 10_000,
      ...(options.now ? { now: options.now } : {}),
    });
  }

  /** Whether the user may administer the module; undefined when the apiserver could not answer. */
  async isAdmin(user: UserRef): Promise<boolean | undefined> {
    const key = `${user.username}\u0000${(user.groups ?? []).join('\u0000')}`;
    try {
      return await this.memo.get(key, () => this.review(user));
    } catch (err: unknown) {
      this.options.log.debug({ err, user: user.username }, 'access review failed; is_admin reported false');
      return undefined;
    }
  }

  private async review(user: UserRef): Promise<boolean> {
    for (const attrs of ADMIN_CHECKS) {
      if (await this.allowed(user, attrs)) return true;
    }
    return false;
  }

  private async allowed(user: UserRef, resourceAttributes: (typeof ADMIN_CHECKS)[number]): Promise<boolean> {
    const body = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: user.username, groups: user.groups, resourceAttributes },
    };
    const response = await this.options.call({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body,
      timeoutMs: 5_000,
      what: `review access of ${user.username} to ${resourceAttributes.verb} ${resourceAttributes.resource}`,
    });
    return allowedOf(response);
  }
}
