/**
 * virt-operator's RBAC (knative/kubevirt/operator-rbac.yaml) by impersonation on a real apiserver with
 * the install applied: what KubeVirt's operator must do passes, including creating a role as wide as
 * upstream's virt-controller role (the apiserver's escalation check), and what it must not is refused.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { kubectl, startExtraApiServer, type ExtraApiServer, type KubectlOptions } from '../../env/index.js';
import { applyInstall, prepareApiServer } from './knative-crds.js';

const NS = 'd8-virtualization';
const OPERATOR = `system:serviceaccount:${NS}:kubevirt-operator`;
let extra: ExtraApiServer;
let opts: KubectlOptions;

/** kubectl as virt-operator's ServiceAccount; the whole result, refusals included. */
const asOperator = (args: string[], stdin?: string) => kubectl([`--as=${OPERATOR}`, ...args], { ...opts, ...(stdin === undefined ? {} : { stdin }) });

const clusterRole = (name: string, rules: unknown[]): string =>
  JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules });

beforeAll(async () => {
  extra = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/operator-rbac-${randomBytes(4).toString('hex')}`] });
  opts = { kubeconfigPath: extra.kubeconfigPath };
  await prepareApiServer(opts);
  await applyInstall(opts);
}, 180_000);

afterAll(async () => {
  await extra?.stop();
});

describe("virt-operator's ServiceAccount", () => {
  it("reads KubeVirt's configuration object and sets its status phase", async () => {
    expect(await asOperator(['get', 'internalvirtualizationkubevirts', '-n', NS, 'config', '-o', 'name'])).toMatchObject({ code: 0 });
    const patched = await asOperator([
      'patch',
      'internalvirtualizationkubevirts',
      'config',
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Deploying"}}',
    ]);
    expect(patched.stderr).toBe('');
    expect(patched.code).toBe(0);
  }, 60_000);

  it("creates a ClusterRole as wide as upstream virt-controller's (`*` on KubeVirt's renamed group) and the components' ServiceAccount and Deployment", async () => {
    const role = await asOperator(
      ['create', '-f', '-'],
      clusterRole('kubevirt-internal-virtualization-controller', [
        { apiGroups: ['internal.virtualization.deckhouse.io'], resources: ['*'], verbs: ['*'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch', 'update'] },
      ]),
    );
    expect(role.stderr).toBe('');
    expect(await asOperator(['create', 'serviceaccount', 'kubevirt-internal-virtualization-controller', '-n', NS])).toMatchObject({ code: 0 });
    const deployment = await asOperator(['create', 'deployment', 'virt-controller', '-n', NS, '--image=kubevirt/virt-controller:v1.6.0']);
    expect(deployment.stderr).toBe('');
  }, 60_000);

  it('creates an internal VM (KubeVirt objects it manages)', async () => {
    const vm = {
      apiVersion: 'internal.virtualization.deckhouse.io/v1',
      kind: 'InternalVirtualizationVirtualMachine',
      metadata: { name: 'rbac-probe', namespace: NS },
      spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
    };
    const r = await asOperator(['create', '--validate=false', '-f', '-'], JSON.stringify(vm));
    expect(r.stderr).toBe('');
  }, 60_000);

  it('is refused a role wider than its own (impersonate), our own API, deleting namespaces and Secrets of other names in its namespace', async () => {
    const escalate = await asOperator(
      ['create', '-f', '-'],
      clusterRole('probe-escalation', [{ apiGroups: [''], resources: ['users', 'serviceaccounts'], verbs: ['impersonate'] }]),
    );
    expect(escalate.code).not.toBe(0);
    expect(escalate.stderr).toMatch(/forbidden: user .* is attempting to grant RBAC permissions not currently held/);
    const ours = await asOperator(['get', 'virtualmachines.virtualization.deckhouse.io', '-A']);
    expect(ours.stderr).toMatch(/forbidden: User "system:serviceaccount:d8-virtualization:kubevirt-operator" cannot list resource "virtualmachines"/);
    const ns = await asOperator(['delete', 'namespace', 'default', '--dry-run=server']);
    expect(ns.stderr).toMatch(/cannot delete resource "namespaces"/);
    const secret = await asOperator(['delete', 'secret', 'admission-tls', '-n', NS, '--dry-run=server']);
    expect(secret.stderr).toMatch(/cannot delete resource "secrets"/);
  }, 60_000);
});
