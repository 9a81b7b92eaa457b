import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { AuthorizationV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { kubectl } from '../../env/index.js';
import type { AccessCheck } from './expected-access.js';

export const ROLES_DIR = fileURLToPath(new URL('../../../knative/rbac/roles/', import.meta.url));

/** Role file/metadata name suffix of each access level (`d8:user-authz:virtualization:<suffix>`). */
export const ROLE_NAMES = {
  User: 'd8:user-authz:virtualization:user',
  PrivilegedUser: 'd8:user-authz:virtualization:privileged-user',
  Editor: 'd8:user-authz:virtualization:editor',
  Admin: 'd8:user-authz:virtualization:admin',
  ClusterEditor: 'd8:user-authz:virtualization:cluster-editor',
  ClusterAdmin: 'd8:user-authz:virtualization:cluster-admin',
} as const;

/** Apply the role model exactly as the install does (kustomize directory, server-side apply). */
export async function applyRoles(): Promise<void> {
  const res = await kubectl(['apply', '--server-side', '--field-manager=roles-test', '-k', ROLES_DIR]);
  if (res.code !== 0) throw new Error(`applying ${ROLES_DIR} failed:\n${res.stderr}`);
}

/** A new user bound to one ClusterRole alone; returns the user name and an unbind function. */
export async function bindToFreshUser(kc: KubeConfig, roleName: string): Promise<{ user: string; unbind: () => Promise<void> }> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const user = `role-matrix-${randomBytes(4).toString('hex')}`;
  const name = `${user}-binding`;
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    },
  });
  return { user, unbind: async () => void (await rbac.deleteClusterRoleBinding({ name })) };
}

/** Ask the apiserver's authorizer (SubjectAccessReview) whether `user` may do what `check` asks.
 *  (`kubectl auth can-i` cannot be used for the subresources group: it resolves resources through
 *  discovery, and that group is only served once the aggregated API is registered.) */
export async function isAllowed(kc: KubeConfig, user: string, check: Omit<AccessCheck, 'allowed' | 'row'>, namespace: string): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user,
        groups: ['system:authenticated'],
        resourceAttributes: {
          group: check.group,
          resource: check.resource,
          subresource: check.subresource,
          verb: check.verb,
          namespace: check.namespaced ? namespace : undefined,
        },
      },
    },
  });
  return review.status?.allowed === true;
}
