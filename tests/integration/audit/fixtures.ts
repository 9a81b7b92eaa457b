/**
 * Test fixtures for the audit function against the real apiserver: the Deckhouse CRDs the module reads
 * but does not own (from tests/env), an unprivileged user with its own client cert, and
 * kubectl helpers.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { getTestEnv, issueCert, kubectl, type KubectlOptions } from '../../env/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { AUDIT_SENDER, KubeReviewer } from '../../../shared/authz/index.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { applyFromKnative } from '../metrics-auth/fixtures.js';

/** kubectl that fails the test with its stderr. */
export async function kc(args: string[], opts?: KubectlOptions): Promise<string> {
  const res = await kubectl(args, opts);
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${res.stderr}`);
  return res.stdout;
}

export async function applyYaml(yaml: string, opts?: KubectlOptions): Promise<string> {
  return kc(['apply', '--server-side', '--force-conflicts', '--field-manager=audit-tests', '-f', '-'], { ...opts, stdin: yaml });
}

export { installDeckhouseCrds } from '../../env/index.js';

/** A kubeconfig for `user` (no groups beyond system:authenticated) on `server`, with its own client cert. */
export async function userKubeconfig(user: string, server: string = getTestEnv().server): Promise<string> {
  const env = getTestEnv();
  const dir = join(env.workDir, 'audit-users');
  const ca = { name: 'client', certPath: env.clientCaPath, keyPath: env.clientCaKeyPath };
  const cert = await issueCert(ca, dir, `${user}-${server.split(':').pop() ?? ''}`, { commonName: user, usage: 'client' });
  const path = join(dir, `${user}-${server.split(':').pop() ?? ''}.kubeconfig`);
  await writeFile(
    path,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}", certificate-authority: "${env.servingCaPath}"}}]
users: [{name: ${user}, user: {client-certificate: "${cert.certPath}", client-key: "${cert.keyPath}"}}]
contexts: [{name: x, context: {cluster: c, user: ${user}}}]
current-context: x
`,
  );
  return path;
}

/** A VirtualMachine manifest the CRD accepts. */
export function vmManifest(namespace: string, name: string, disk: string): string {
  return `apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachine
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  virtualMachineClassName: generic
  cpu: {cores: 1}
  memory: {size: 1Gi}
  blockDeviceRefs: [{kind: VirtualDisk, name: ${disk}}]
`;
}

/** The log shipper's identity the install binds (knative/rbac/components/senders.yaml). */
export const LOG_SHIPPER = { namespace: 'd8-log-shipper', name: 'log-shipper' };
/** The identity whose token the apiserver's audit webhook kubeconfig carries (same file). */
export const AUDIT_WEBHOOK = { namespace: 'd8-virtualization', name: 'audit-webhook' };

/**
 * The install's sender RBAC applied as it is, the log shipper's namespace and ServiceAccount made;
 * resolves once the apiserver lets both senders create auditevents (RBAC is seen with a short delay).
 */
export async function applySenderRbac(): Promise<void> {
  await applyFromKnative('namespace.yaml');
  await kubectl(['create', 'namespace', LOG_SHIPPER.namespace]);
  await kubectl(['-n', LOG_SHIPPER.namespace, 'create', 'serviceaccount', LOG_SHIPPER.name]);
  await applyFromKnative('rbac/components/senders.yaml');
  // A SubjectAccessReview, not `kubectl auth can-i`: kubectl cannot map a resource that no API serves.
  const admin = KubeClient.fromSource({ kubeconfigPath: getTestEnv().kubeconfigPath });
  const reviewer = new KubeReviewer(admin.rest);
  try {
    for (const sa of [LOG_SHIPPER, AUDIT_WEBHOOK]) {
      const user = { username: `system:serviceaccount:${sa.namespace}:${sa.name}`, groups: ['system:serviceaccounts', 'system:authenticated'] };
      await waitFor(
        `${sa.namespace}/${sa.name} to be allowed create auditevents`,
        async () => (await reviewer.authorize(user, { resourceAttributes: AUDIT_SENDER })).allowed || undefined,
      );
    }
  } finally {
    admin.close();
  }
}
