/**
 * d8v against the subresources API as the cluster wires it (tests/integration/subresources/harness.ts):
 * the real aggregator of a kube-apiserver of the test's own, the subresources function behind the
 * APIService, and the virt-api stand-in (KubeVirt cannot run here) behind that. The console is driven
 * from a real terminal (tmux), as a person would.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { promisify } from 'node:util';
import type { ServerHandle } from '../../../shared/runtime/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import type { VirtApiStandIn } from '../../../platform/simulators/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import { startStack, stopCluster, type Cluster, type Pki } from '../subresources/harness.js';
import { D8V, d8v, kubeconfigFileFor } from './d8v.js';

const run = promisify(execFile);
const NS = `cli-${randomBytes(3).toString('hex')}`;

let cluster: Cluster;
let pki: Pki;
let virtApi: VirtApiStandIn;
let fn: ServerHandle;
let admin = '';
let userKc = '';
let privilegedKc = '';

const vmManifest = (name: string): string =>
  JSON.stringify({
    apiVersion: 'virtualization.deckhouse.io/v1alpha2',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS },
    spec: {
      virtualMachineClassName: 'generic',
      runPolicy: 'AlwaysOn',
      cpu: { cores: 1, coreFraction: '100%' },
      memory: { size: '1Gi' },
      blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: 'alpine' }],
    },
  });

beforeAll(async () => {
  ({ cluster, pki, virtApi, fn } = await startStack('cli'));
  admin = cluster.apiserver.kubeconfigPath;
  await cluster.apply(`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${NS}}\n`);
  for (const vm of ['web', 'off']) await cluster.apply(vmManifest(vm));
  const status = await cluster.kubectl([
    '-n',
    NS,
    'patch',
    'virtualmachine',
    'web',
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"phase":"Running"}}',
  ]);
  if (status.code !== 0) throw new Error(`cannot set the VM Running: ${status.stderr}`);
  for (const [user, role] of [
    ['ursula@example.com', 'user'],
    ['petra@example.com', 'privileged-user'],
  ] as const) {
    await cluster.apply(
      JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: `cli-${role}`, namespace: NS },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `d8:user-authz:virtualization:${role}` },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      }),
    );
  }
  userKc = await kubeconfigFileFor('ursula@example.com', pki.dir, admin);
  privilegedKc = await kubeconfigFileFor('petra@example.com', pki.dir, admin);
}, 240_000);

afterAll(async () => {
  await fn?.close();
  await virtApi?.stop();
  await stopCluster(cluster);
});

const callsTo = (sub: string) => virtApi.calls.filter((c) => c.subresource === sub && c.namespace === NS);

describe('plain subresources', () => {
  it('freeze and unfreeze reach virt-api on the instance path with the timeout and the user; exit 0', async () => {
    const frozen = await d8v(['freeze', 'web', '-n', NS, '--unfreeze-timeout', '1m'], { kubeconfig: admin });
    expect([frozen.code, frozen.stdout]).toEqual([0, `VirtualMachine ${NS}/web frozen\n`]);
    const call = callsTo('freeze').at(-1);
    expect(call).toMatchObject({
      path: `/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances/web/freeze`,
      body: { unfreezeTimeout: '1m' },
    });
    expect(call?.originatingUser).toBeTruthy();
    const thawed = await d8v(['unfreeze', 'web', '-n', NS], { kubeconfig: admin });
    expect(thawed.code).toBe(0);
    expect(callsTo('unfreeze')).toHaveLength(1);
  });

  it('addvolume and removevolume reach virt-api on the VM path with the volume built from the options', async () => {
    const added = await d8v(['addvolume', 'web', 'data', '--volume-kind', 'VirtualDisk', '--pvc-name', 'vd-data-pvc', '--serial', 'DATA1', '-n', NS], {
      kubeconfig: admin,
    });
    expect(added.code).toBe(0);
    const add = callsTo('addvolume').at(-1);
    expect(add?.path).toBe(`/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachines/web/addvolume`);
    expect(JSON.stringify(add?.body)).toContain('vd-data-pvc');
    const removed = await d8v(['removevolume', 'web', 'data', '-n', NS], { kubeconfig: admin });
    expect(removed.code).toBe(0);
    expect(JSON.stringify(callsTo('removevolume').at(-1)?.body)).toContain('data');
  });

  it('a request the server refuses exits 1 with its message; nothing reaches virt-api', async () => {
    const before = virtApi.calls.length;
    const ran = await d8v(['addvolume', 'web', 'data', '--volume-kind', 'VirtualDisk', '-n', NS], { kubeconfig: admin });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('needs query pvcName');
    const stopped = await d8v(['freeze', 'off', '-n', NS], { kubeconfig: admin });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/freeze needs it Running/);
    expect(virtApi.calls.length).toBe(before);
  });

  it('a VM that does not exist exits 3; a user without the right exits 4', async () => {
    expect((await d8v(['freeze', 'ghost', '-n', NS], { kubeconfig: admin })).code).toBe(3);
    const refused = await d8v(['freeze', 'web', '-n', NS], { kubeconfig: privilegedKc });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/forbidden/i);
  });

  it('scaledownwith removes the named pool members and lowers replicas; --dry-run and a VM of no pool change nothing', async () => {
    await cluster.apply(
      JSON.stringify({
        apiVersion: 'virtualization.deckhouse.io/v1alpha2',
        kind: 'VirtualMachinePool',
        metadata: { name: 'pool', namespace: NS },
        spec: {
          replicas: 2,
          scaleDownPolicy: 'NewestFirst',
          virtualDiskTemplates: [{ name: 'root', spec: { persistentVolumeClaim: { size: '1Gi' } } }],
          virtualMachineTemplate: {
            spec: {
              ...(JSON.parse(vmManifest('x')) as { spec: object }).spec,
              liveMigrationPolicy: 'PreferSafe',
              blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'root' }],
            },
          },
        },
      }),
    );
    const uid = (await cluster.kubectl(['-n', NS, 'get', 'virtualmachinepool', 'pool', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    for (const name of ['pool-bbbbb', 'pool-ccccc']) {
      const vm = JSON.parse(vmManifest(name)) as { metadata: Record<string, unknown> };
      vm.metadata['labels'] = { 'vmpool.virtualization.deckhouse.io/pool-uid': uid };
      vm.metadata['ownerReferences'] = [
        { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualMachinePool', name: 'pool', uid, controller: true },
      ];
      await cluster.apply(JSON.stringify(vm));
    }
    const replicas = async (): Promise<string> =>
      (await cluster.kubectl(['-n', NS, 'get', 'virtualmachinepool', 'pool', '-o', 'jsonpath={.spec.replicas}'])).stdout;
    const dry = await d8v(['scaledownwith', 'pool', 'pool-bbbbb', '--dry-run', '-n', NS], { kubeconfig: admin });
    expect(dry).toMatchObject({ code: 0, stdout: `would remove pool-bbbbb from VirtualMachinePool ${NS}/pool\n` });
    expect(await replicas()).toBe('2');
    const foreign = await d8v(['scaledownwith', 'pool', 'web', '-n', NS], { kubeconfig: admin });
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('target VirtualMachine "web" does not belong to VirtualMachinePool "pool"');
    const done = await d8v(['scaledownwith', 'pool', 'pool-bbbbb', '-n', NS], { kubeconfig: admin });
    expect(done).toMatchObject({ code: 0, stdout: `removed pool-bbbbb from VirtualMachinePool ${NS}/pool\n` });
    expect(await replicas()).toBe('1');
    expect((await cluster.kubectl(['-n', NS, 'get', 'virtualmachine', 'pool-bbbbb'])).code).not.toBe(0);
    expect((await d8v(['scaledownwith', 'pool', '-n', NS], { kubeconfig: admin })).code).toBe(2);
  });
});

describe('streams', () => {
  it('console in a real terminal (tmux) shows the stand-in prompt, carries typing both ways, and Ctrl+] leaves with 0', async () => {
    const socket = `d8v-cli-${randomBytes(3).toString('hex')}`;
    const tmux = (...args: string[]) => run('tmux', ['-L', socket, ...args]);
    const screen = async (): Promise<string> => (await tmux('capture-pane', '-p', '-t', 'cli')).stdout;
    const command = `${process.execPath} ${D8V} console web -n ${NS} --kubeconfig ${privilegedKc}; echo "EXIT=$?"; sleep 300`;
    await tmux('new-session', '-d', '-s', 'cli', '-x', '160', '-y', '40', command);
    try {
      // capture-pane drops trailing blanks: the prompt `web login: ` shows as `web login:`.
      await waitFor('the login prompt', async () => (await screen()).includes('web login:'), { timeoutMs: 60_000, intervalMs: 200 });
      expect(await screen()).toContain('Press Ctrl+] to leave');
      await tmux('send-keys', '-t', 'cli', 'root', 'Enter');
      await waitFor('the password prompt', async () => /web login: root\s*\n\s*Password:/.test(await screen()), { intervalMs: 200 });
      await tmux('send-keys', '-t', 'cli', 'C-]');
      await waitFor('d8v to exit', async () => (await screen()).includes('EXIT='), { intervalMs: 200 });
      expect(await screen()).toContain('EXIT=0');
      await waitFor('the session closed at virt-api', () => virtApi.open.console === 0);
    } catch (err: unknown) {
      throw new Error(`${(err as Error).message}; the terminal showed:\n${await screen().catch(() => '?')}`, { cause: err });
    } finally {
      await tmux('kill-server').catch(() => undefined);
    }
  }, 150_000);

  it('a User-role subject is refused the console by the apiserver: exit 4 (the PrivilegedUser above got in)', async () => {
    const refused = await d8v(['console', 'web', '-n', NS], { kubeconfig: userKc });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/forbidden/i);
  });

  it('port-forward carries a TCP connection to the VM port (the stand-in echoes) until Ctrl-C, then exits 0', async () => {
    const child = spawn(process.execPath, [D8V, 'port-forward', 'web', ':8080', '-n', NS, '--kubeconfig', privilegedKc], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      const port = Number(await waitFor('the listener', () => /Forwarding from 127\.0\.0\.1:(\d+) -> /.exec(out)?.[1], { timeoutMs: 60_000 }));
      const conn = net.connect(port, '127.0.0.1');
      let echoed = '';
      conn.on('data', (c: Buffer) => (echoed += c.toString()));
      conn.write('ping through the aggregator');
      await waitFor('the echo', () => echoed === 'ping through the aggregator');
      conn.end();
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });

  it('vnc serves a local port where a viewer gets the RFB handshake', async () => {
    const child = spawn(process.execPath, [D8V, 'vnc', 'web', '-n', NS, '--kubeconfig', privilegedKc], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      const port = Number(await waitFor('the listener', () => /Forwarding from 127\.0\.0\.1:(\d+) -> VNC/.exec(out)?.[1], { timeoutMs: 60_000 }));
      const conn = net.connect(port, '127.0.0.1');
      let got = '';
      conn.on('data', (c: Buffer) => (got += c.toString('latin1')));
      await waitFor('the RFB version', () => got.startsWith('RFB 003.008\n'));
      conn.destroy();
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});
