/**
 * Test fixtures for the audit function against the real apiserver: the Deckhouse CRDs the module reads
 * but does not own (from tests/env), an unprivileged user with its own client cert, and
 * kubectl helpers.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { getTestEnv, issueCert, kubectl, type KubectlOptions } from '../../env/index.js';

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
