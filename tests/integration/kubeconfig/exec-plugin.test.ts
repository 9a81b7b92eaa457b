/**
 * A kubeconfig whose user is an exec credential plugin, as most managed clusters' kubeconfigs are: a
 * small script printing an ExecCredential with a ServiceAccount token from the TokenRequest API of
 * the test apiserver. The controller (its process, under the install's RBAC) and `d8v` authenticate
 * with it; a plugin that fails is named with its message.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freshNamespace, kubectl, newKubeConfig } from '../../env/index.js';
import { d8v } from '../cli/d8v.js';
import { vm } from '../controller/builders.js';
import { eventually, useCluster } from '../controller/fixtures.js';
import { spawnController, type ControllerProcess } from '../controller/process.js';
import { newScope } from '../controller/scope.js';

const KNATIVE = fileURLToPath(new URL('../../../knative/', import.meta.url));
const MODULE_NAMESPACE = 'd8-virtualization';

async function ok(args: string[]): Promise<string> {
  const res = await kubectl(args);
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}

let dir: string;

/**
 * A kubeconfig for the test apiserver whose user is the exec plugin `plugin` (a shell script written
 * next to it); the script appends a line to `<plugin>.calls` each time it runs.
 */
async function execKubeconfig(plugin: string, script: string): Promise<{ path: string; calls: string }> {
  const pluginPath = join(dir, `${plugin}.sh`);
  const calls = `${pluginPath}.calls`;
  await writeFile(pluginPath, `#!/bin/sh\necho run >> "${calls}"\n${script}\n`, { mode: 0o755 });
  const cluster = newKubeConfig().getCurrentCluster();
  if (cluster === null) throw new Error('the admin kubeconfig has no cluster');
  const ca = cluster.caData ? `certificate-authority-data: ${cluster.caData}` : `certificate-authority: "${cluster.caFile}"`;
  const path = join(dir, `${plugin}.kubeconfig`);
  await writeFile(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "${cluster.server}", ${ca}}
users:
- name: ${plugin}
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: "${pluginPath}", interactiveMode: Never}
contexts: [{name: ${plugin}, context: {cluster: test, user: ${plugin}}}]
current-context: ${plugin}
`,
    { mode: 0o600 },
  );
  return { path, calls };
}

/** A plugin printing an ExecCredential with a token of ServiceAccount `namespace/sa` from the TokenRequest API. */
async function serviceAccountPlugin(namespace: string, sa: string): Promise<{ path: string; calls: string }> {
  const token = (await ok(['create', 'token', sa, '-n', namespace, '--duration=1h'])).trim();
  const credential = {
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token, expirationTimestamp: new Date(Date.now() + 3_600_000).toISOString() },
  };
  return execKubeconfig(`${sa}-plugin`, `cat <<'EOF'\n${JSON.stringify(credential)}\nEOF`);
}

const calls = async (file: string): Promise<number> => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '').length;

const t = useCluster();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'exec-plugin-'));
  await ok(['apply', '--server-side', '--force-conflicts', '--field-manager=exec-plugin-test', '-f', `${KNATIVE}namespace.yaml`]);
  await ok(['apply', '--server-side', '--force-conflicts', '--field-manager=exec-plugin-test', '-f', `${KNATIVE}rbac/components/controller.yaml`]);
});

describe('an exec credential plugin in the kubeconfig', () => {
  let controller: ControllerProcess | undefined;
  afterAll(async () => {
    controller?.kill();
    await controller?.exited;
  });

  it('authenticates the controller as its ServiceAccount: it takes its leader-election Lease', async () => {
    const plugin = await serviceAccountPlugin(MODULE_NAMESPACE, 'controller');
    const lease = `exec-plugin-${randomBytes(3).toString('hex')}`;
    // Watching a namespace of its own: a controller of the whole cluster would reconcile the VMs of
    // every other test running on this control plane beside their own controllers.
    const own = await freshNamespace('exec-plugin-controller');
    controller = spawnController('exec-plugin-controller', {
      KUBECONFIG: plugin.path,
      LEADER_ELECTION: 'true',
      POD_NAMESPACE: MODULE_NAMESPACE,
      LEADER_ELECTION_LEASE_NAME: lease,
      MODULE_CONFIG_WATCH: 'false',
      WATCH_NAMESPACE: own,
    });
    const holder = await eventually(async () => {
      const got = await kubectl(['get', 'lease', lease, '-n', MODULE_NAMESPACE, '-o', 'jsonpath={.spec.holderIdentity}']);
      return got.code === 0 && got.stdout.startsWith('exec-plugin-controller') ? got.stdout : undefined;
    }, `the controller holds Lease ${lease}`);
    expect(holder).toMatch(/^exec-plugin-controller/);
    expect(await calls(plugin.calls)).toBeGreaterThanOrEqual(1);
    expect(controller.logs.some((l) => /cannot read the kubeconfig|credentials for user/.test(JSON.stringify(l)))).toBe(false);
  });

  it('authenticates d8v as a ServiceAccount with a Role on VMs: it creates the operation', async () => {
    const ns = await freshNamespace('exec-plugin');
    await ok(['create', 'serviceaccount', 'd8v-user', '-n', ns]);
    await ok(['create', 'role', 'vm-operator', '-n', ns, '--verb=get', '--resource=virtualmachines.virtualization.deckhouse.io']);
    await ok(['create', 'role', 'vmop-creator', '-n', ns, '--verb=create', '--resource=virtualmachineoperations.virtualization.deckhouse.io']);
    for (const role of ['vm-operator', 'vmop-creator'])
      await ok(['create', 'rolebinding', role, '-n', ns, `--role=${role}`, `--serviceaccount=${ns}:d8v-user`]);
    await t.c.vms.create(vm(newScope(ns), 'web', 'no-such-class', { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: 'no-such-image' }] }));
    const plugin = await serviceAccountPlugin(ns, 'd8v-user');

    const ran = await d8v(['start', 'web', '--no-wait', '-n', ns], { kubeconfig: plugin.path });
    expect(ran).toMatchObject({ code: 0, stdout: expect.stringMatching(/^virtualmachineoperation\/start-web-\w+ created\n$/) });
    const ops = (await t.c.vmops.list({ namespace: ns })).items;
    expect(ops.map((op) => [op.spec.type, op.spec.virtualMachineName])).toEqual([['Start', 'web']]);
    expect(await calls(plugin.calls)).toBeGreaterThanOrEqual(1);

    // The same ServiceAccount is refused what its Role does not grant: the token is really its own.
    const denied = await d8v(['start', 'web', '--no-wait', '-n', 'default'], { kubeconfig: plugin.path });
    expect(denied.code).toBe(4);
    expect(denied.stderr).toContain(`system:serviceaccount:${ns}:d8v-user`);
  });

  it('names a plugin that fails, with its message, for d8v and for the controller', async () => {
    const broken = await execKubeconfig('broken', `echo "no session for this cluster: run login first" >&2\nexit 1`);
    const ran = await d8v(['start', 'web', '--no-wait', '-n', 'default'], { kubeconfig: broken.path });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`credentials for user "broken" (exec plugin ${join(dir, 'broken.sh')}) failed: no session for this cluster: run login first`);

    const failing = spawnController('exec-plugin-broken', {
      KUBECONFIG: broken.path,
      LEADER_ELECTION: 'false',
      MODULE_CONFIG_WATCH: 'false',
      WATCH_NAMESPACE: await freshNamespace('exec-plugin-broken'),
    });
    try {
      const line = await failing.waitForLog((l) => JSON.stringify(l).includes('exec plugin'), 60_000);
      expect(JSON.stringify(line)).toContain('no session for this cluster: run login first');
    } finally {
      failing.kill();
      await failing.exited;
    }
  });
});
