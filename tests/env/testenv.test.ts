import { describe, expect, it } from '@jest/globals';
import { CoreV1Api, VersionApi } from '@kubernetes/client-node';
import { waitFor } from '../../shared/testing/wait.js';
import { freshNamespace, getTestEnv, kubectl, newKubeConfig, readAuditLog, startExtraApiServer } from './index.js';

describe('the test control plane', () => {
  it('serves the pinned Kubernetes version to an admin client', async () => {
    const info = await newKubeConfig().makeApiClient(VersionApi).getCode();
    expect(info.gitVersion).toBe(`v${process.env['KUBE_VERSION'] ?? '1.37.2'}`);
  });

  it('creates a fresh namespace per call', async () => {
    const [a, b] = await Promise.all([freshNamespace('env'), freshNamespace('env')]);
    expect(a).not.toBe(b);
    const ns = await newKubeConfig().makeApiClient(CoreV1Api).readNamespace({ name: a });
    expect(ns.status?.phase).toBe('Active');
  });

  it('authorizes with RBAC: an unbound user is forbidden, admin is allowed', async () => {
    const denied = await kubectl(['auth', 'can-i', 'list', 'pods', '-A'], { asUser: 'nobody' });
    expect(denied.stdout.trim()).toBe('no');
    const allowed = await kubectl(['auth', 'can-i', 'list', 'pods', '-A']);
    expect(allowed.stdout.trim()).toBe('yes');
  });

  it('writes JSON audit events for requests under the audit policy', async () => {
    const since = Date.now();
    const ns = await freshNamespace('audit');
    const env = getTestEnv();
    await waitFor('the create of the namespace in the audit log', async () =>
      (await readAuditLog(env.auditLogPath, since)).some((line) => line.includes(`"namespaces"`) && line.includes(`"${ns}"`) && line.includes('"create"')),
    );
  });

  it('starts an extra apiserver on the same etcd that survives kill and restart', async () => {
    const extra = await startExtraApiServer();
    try {
      const ns = await freshNamespace('extra');
      const core = extra.kubeConfig().makeApiClient(CoreV1Api);
      expect((await core.readNamespace({ name: ns })).metadata?.name).toBe(ns);
      await extra.kill();
      await expect(core.readNamespace({ name: ns })).rejects.toThrow();
      await extra.restart();
      expect((await core.readNamespace({ name: ns })).metadata?.name).toBe(ns);
    } finally {
      await extra.stop();
    }
  }, 120_000);
});
