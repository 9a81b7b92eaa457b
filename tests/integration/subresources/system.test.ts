/**
 * The subresources API through the real aggregator of the test kube-apiserver: discovery and OpenAPI
 * with kubectl, the front-proxy authentication (401 for anything else), the calls proxied to the
 * virt-api stand-in, RBAC decided by the apiserver, and streams. One file, because the APIService is
 * cluster-wide and only one may exist.
 */
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubeEvent, Lease } from '../../../shared/kube/index.js';
import type { ServerHandle } from '../../../shared/runtime/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import type { VirtApiStandIn } from '../../../platform/simulators/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import { startStack, startVirtApi, stopCluster, type Cluster, type Pki } from './harness.js';
import { rawUpgrade, type RawUpgrade } from '../../env/raw-upgrade.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { subresourceFilesystems } from '../../../daemons/controller/reconcilers/snapshot/freeze.js';

const GROUP_PATH = '/apis/subresources.virtualization.deckhouse.io/v1alpha2';
const NS = 'vms';
const VM_PATH = (vm: string, sub: string): string => `${GROUP_PATH}/namespaces/${NS}/virtualmachines/${vm}/${sub}`;
const KUBEVIRT_VMI = `/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances`;
const KUBEVIRT_VM = `/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachines`;
const SA = 'system:serviceaccount:d8-virtualization:subresources';

const vmYaml = (name: string): string => `apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachine
metadata: {name: ${name}, namespace: ${NS}}
spec:
  cpu: {cores: 1}
  memory: {size: 1Gi}
  virtualMachineClassName: generic
  blockDeviceRefs: [{kind: VirtualDisk, name: root}]
`;

/** PUT through the aggregator, as kubectl does it (`replace --raw`). */
const put = (path: string, body: string, asUser?: string): ReturnType<Cluster['kubectl']> =>
  kubectl(['replace', '--raw', path, '-f', '-'], { stdin: body, ...(asUser === undefined ? {} : { asUser }) });

/** How many requests the function has answered (its host's own counter), by method. */
async function served(method: string): Promise<number> {
  return (await fn.metrics.expose())
    .split('\n')
    .filter((l) => l.startsWith('http_requests_total{') && l.includes(`method="${method}"`))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

let cluster: Cluster;
let pki: Pki;
let virtApi: VirtApiStandIn;
let fn: ServerHandle;

beforeAll(async () => {
  // Session Leases renewed every 0.5 s here (10 s by default), so a test sees a renewal soon.
  ({ cluster, pki, virtApi, fn } = await startStack('system', { SESSION_RENEW_MS: '500' }));
  await cluster.apply(`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${NS}}\n`);
  for (const [name, phase] of [
    ['running-vm', 'Running'],
    ['stopped-vm', 'Stopped'],
  ] as const) {
    await cluster.apply(vmYaml(name));
    const res = await kubectl([
      'patch',
      'virtualmachine.virtualization.deckhouse.io',
      name,
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { phase } }),
    ]);
    if (res.code !== 0) throw new Error(res.stderr);
  }
  for (const [user, role] of [
    ['alice', 'user'],
    ['bob', 'privileged-user'],
  ] as const) {
    await cluster.apply(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ${user}, namespace: ${NS}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: 'd8:user-authz:virtualization:${role}'}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: ${user}}]
`);
  }
}, 180_000);

afterAll(async () => {
  await fn?.close();
  await virtApi?.stop();
  await stopCluster(cluster);
});

const kubectl = (args: string[], opts?: Parameters<Cluster['kubectl']>[1]): ReturnType<Cluster['kubectl']> => cluster.kubectl(args, opts);

/** A direct HTTPS call to the function (not through the aggregator), with or without a client pair. */
function direct(
  path: string,
  opts: { cert?: string; key?: string; headers?: Record<string, string>; method?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: fn.port,
        path,
        method: opts.method ?? 'GET',
        ca: pki.caPem,
        servername: 'subresources-api.d8-virtualization.svc',
        cert: opts.cert,
        key: opts.key,
        headers: opts.headers,
        // A fresh connection each time: a pooled one may be closed by the server's keep-alive timeout
        // just as it is reused (a "socket hang up" on a busy machine).
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('discovery and OpenAPI through the aggregator', () => {
  it('kubectl get --raw lists the resources and subresources of v1alpha2', async () => {
    const res = await kubectl(['get', '--raw', GROUP_PATH]);
    expect(res.stderr).toBe('');
    const list = JSON.parse(res.stdout) as { groupVersion: string; resources: Array<{ name: string; verbs: string[] }> };
    expect(list.groupVersion).toBe('subresources.virtualization.deckhouse.io/v1alpha2');
    expect(Object.fromEntries(list.resources.map((r) => [r.name, r.verbs]))).toEqual({
      virtualmachines: ['get'],
      'virtualmachines/console': ['get', 'create'],
      'virtualmachines/vnc': ['get', 'create'],
      'virtualmachines/portforward': ['get', 'create'],
      'virtualmachines/addvolume': ['update'],
      'virtualmachines/removevolume': ['update'],
      'virtualmachines/freeze': ['update'],
      'virtualmachines/unfreeze': ['update'],
      'virtualmachines/cancelevacuation': ['update'],
      'virtualmachines/addresourceclaim': ['update'],
      'virtualmachines/removeresourceclaim': ['update'],
      'virtualmachines/scale': ['get'],
      virtualmachinepools: [],
      'virtualmachinepools/scaledownwith': ['create'],
    });
  });

  it('kubectl api-resources shows the group next to the main one, which keeps the short names', async () => {
    const res = await kubectl(['api-resources', '--api-group=subresources.virtualization.deckhouse.io', '-o', 'name']);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe('virtualmachines.subresources.virtualization.deckhouse.io');
  });

  it('the aggregator merges our OpenAPI v3 document', async () => {
    // The aggregator fetches a new APIService's document in the background.
    const entry = await waitFor(
      'our group in the /openapi/v3 index',
      async () => {
        const index = JSON.parse((await kubectl(['get', '--raw', '/openapi/v3'])).stdout) as { paths: Record<string, { serverRelativeURL: string }> };
        return index.paths['apis/subresources.virtualization.deckhouse.io/v1alpha2'];
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const doc = JSON.parse((await kubectl(['get', '--raw', entry.serverRelativeURL])).stdout) as { info: { title: string }; paths: Record<string, unknown> };
    expect(doc.info.title).toBe('VirtualizationAPI');
    expect(Object.keys(doc.paths)).toContain(`${GROUP_PATH}/namespaces/{namespace}/virtualmachines/{name}/console`);
  });
});

describe('who may call it directly', () => {
  it('answers 401 without a client certificate', async () => {
    const res = await direct(GROUP_PATH, { headers: { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' } });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({
      kind: 'Status',
      code: 401,
      reason: 'Unauthorized',
      message: expect.stringContaining('no client certificate'),
    });
  });

  it('answers 401 to a certificate of another CA, even one the apiserver trusts for users', async () => {
    const res = await direct(GROUP_PATH, { cert: pki.virtApiServing.cert, key: pki.virtApiServing.key, headers: { 'X-Remote-User': 'admin' } });
    expect(res.status).toBe(401);
    expect(res.body).toContain('not signed by the front-proxy CA');
  });

  it('answers 401 to the front proxy when it names no user', async () => {
    const res = await direct(GROUP_PATH, { cert: pki.frontProxy.cert, key: pki.frontProxy.key });
    expect(res.status).toBe(401);
    expect(res.body).toContain('no user in the request headers (X-Remote-User)');
  });

  it('serves the front proxy naming a user, and keeps serving after the refusals', async () => {
    const res = await direct(GROUP_PATH, { cert: pki.frontProxy.cert, key: pki.frontProxy.key, headers: { 'X-Remote-User': 'someone' } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'APIResourceList' });
  });
});

describe('calls proxied to virt-api', () => {
  it('freeze reaches the virt-api stand-in on the VMI path, with our identity and the user named, body passed on', async () => {
    const res = await put(VM_PATH('running-vm', 'freeze'), '{"unfreezeTimeout":"30s"}');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(virtApi.calls.at(-1)).toEqual({
      method: 'PUT',
      path: `${KUBEVIRT_VMI}/running-vm/freeze`,
      namespace: NS,
      name: 'running-vm',
      subresource: 'freeze',
      remoteUser: SA,
      remoteGroups: ['system:serviceaccounts', 'system:serviceaccounts:d8-virtualization'],
      originatingUser: 'admin',
      body: { unfreezeTimeout: '30s' },
    });
  });

  it("the controller's freeze client (snapshots of running VMs) reaches virt-api through the aggregator", async () => {
    const kube = KubeClient.fromSource({ kubeconfigPath: cluster.opts.kubeconfigPath });
    try {
      const before = virtApi.calls.length;
      const fs = subresourceFilesystems(kube);
      const signal = new AbortController().signal;
      await fs.freeze(NS, 'running-vm', signal);
      await fs.unfreeze(NS, 'running-vm', signal);
      expect(virtApi.calls.slice(before).map((x) => x.path)).toEqual([`${KUBEVIRT_VMI}/running-vm/freeze`, `${KUBEVIRT_VMI}/running-vm/unfreeze`]);
      // A stopped VM has nothing to freeze: the call fails (the snapshot reconciler then retries).
      await expect(fs.freeze(NS, 'stopped-vm', signal)).rejects.toThrow();
    } finally {
      kube.close();
    }
  });

  it.each([
    ['unfreeze', '', `${KUBEVIRT_VMI}/running-vm/unfreeze`, undefined],
    [
      'addvolume?name=data&volumeKind=VirtualDisk&pvcName=vd-data&serial=abc',
      '{}',
      `${KUBEVIRT_VM}/running-vm/addvolume`,
      {
        name: 'data',
        disk: { name: 'data', disk: { bus: 'scsi' }, errorPolicy: 'report', serial: 'abc' },
        volumeSource: { persistentVolumeClaim: { claimName: 'vd-data', hotpluggable: true } },
      },
    ],
    [
      'addvolume?name=iso&volumeKind=ClusterVirtualImage&image=dvcr/cvi/iso&isCdrom=true',
      '{}',
      `${KUBEVIRT_VM}/running-vm/addvolume`,
      {
        name: 'iso',
        disk: { name: 'iso', cdrom: { bus: 'scsi' }, errorPolicy: 'report' },
        volumeSource: { containerDisk: { image: 'dvcr/cvi/iso', hotpluggable: true } },
      },
    ],
    ['removevolume?name=data', '{}', `${KUBEVIRT_VM}/running-vm/removevolume`, { name: 'data' }],
    ['addvolume', '{"name":"from-kubevirt"}', `${KUBEVIRT_VMI}/running-vm/addvolume`, { name: 'from-kubevirt' }],
    [
      'addresourceclaim?name=gpu&resourceClaimTemplateName=gpu-tpl&requestName=req',
      '{}',
      `${KUBEVIRT_VM}/running-vm/addresourceclaim`,
      { name: 'gpu', resourceClaimTemplateName: 'gpu-tpl', requestName: 'req', hotpluggable: true },
    ],
    ['removeresourceclaim?name=gpu&dryRun=All', '{}', `${KUBEVIRT_VM}/running-vm/removeresourceclaim`, { name: 'gpu', dryRun: ['All'] }],
    ['cancelevacuation', '{}', `${KUBEVIRT_VM}/running-vm/evacuatecancel`, { dryRun: [] }],
  ])('%s goes to the right virt-api path with the right body', async (sub, body, path, expected) => {
    const before = virtApi.calls.length;
    const res = await put(VM_PATH('running-vm', sub), body);
    expect(res.stderr).toBe('');
    expect(virtApi.calls.length).toBe(before + 1);
    expect(virtApi.calls.at(-1)).toMatchObject({ path, remoteUser: SA, originatingUser: 'admin' });
    expect(virtApi.calls.at(-1)?.body).toEqual(expected);
  });

  it('answers 404 naming a VM that does not exist, and virt-api is not called', async () => {
    const before = virtApi.calls.length;
    const res = await put(VM_PATH('ghost', 'freeze'), '{}');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('Error from server (NotFound)');
    expect(res.stderr).toContain('"ghost" not found in namespace vms');
    expect(virtApi.calls.length).toBe(before);
  });

  it.each([
    ['freeze of a VM that is not Running', VM_PATH('stopped-vm', 'freeze'), '{}', 'VirtualMachine vms/stopped-vm is Stopped: freeze needs it Running'],
    ['a body that is not JSON', VM_PATH('running-vm', 'freeze'), '{"unfreezeTimeout":', 'request body is not JSON'],
    [
      'an unknown volume kind',
      VM_PATH('running-vm', 'addvolume?name=x&volumeKind=Floppy'),
      '{}',
      'volumeKind must be one of VirtualDisk, VirtualImage, ClusterVirtualImage, got "Floppy"',
    ],
    ['a VirtualDisk without its PVC', VM_PATH('running-vm', 'addvolume?name=x&volumeKind=VirtualDisk'), '{}', 'volumeKind VirtualDisk needs query pvcName'],
    ['a bad isCdrom', VM_PATH('running-vm', 'addvolume?name=x&volumeKind=VirtualDisk&pvcName=p&isCdrom=yes'), '{}', 'isCdrom must be true or false'],
  ])('answers 400 to %s, naming the problem', async (_what, path, body, message) => {
    const before = virtApi.calls.length;
    const res = await put(path, body);
    expect(res.stderr).toContain('Error from server (BadRequest)');
    expect(res.stderr).toContain(message);
    expect(virtApi.calls.length).toBe(before);
  });

  it('answers 413 to a body over the limit, and keeps serving', async () => {
    const before = virtApi.calls.length;
    const res = await put(VM_PATH('running-vm', 'freeze'), JSON.stringify({ unfreezeTimeout: '30s', padding: 'x'.repeat(2 * 1024 * 1024) }));
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/413|too large/i);
    expect(virtApi.calls.length).toBe(before);
    expect((await put(VM_PATH('running-vm', 'freeze'), '{}')).code).toBe(0);
  });

  it('answers 503 naming virt-api while it is down, and works again once it is back', async () => {
    const port = virtApi.port;
    await virtApi.stop();
    try {
      const res = await put(VM_PATH('running-vm', 'unfreeze'), '');
      expect(res.stderr).toContain('Error from server (ServiceUnavailable)');
      expect(res.stderr).toContain(`virt-api at https://127.0.0.1:${port} is unreachable`);
    } finally {
      virtApi = await startVirtApi(pki, port);
    }
    expect((await put(VM_PATH('running-vm', 'unfreeze'), '')).code).toBe(0);
  });
});

describe('RBAC, decided by the apiserver before it proxies', () => {
  it('refuses a User-role subject with 403 from kube-apiserver: the request never reaches the function', async () => {
    const [puts, gets] = [await served('PUT'), await served('GET')];
    const freeze = await put(VM_PATH('running-vm', 'freeze'), '{}', 'alice');
    expect(freeze.stderr).toContain('Error from server (Forbidden)');
    expect(freeze.stderr).toContain(
      'User "alice" cannot update resource "virtualmachines/freeze" in API group "subresources.virtualization.deckhouse.io" in the namespace "vms"',
    );
    const console = await kubectl(['get', '--raw', VM_PATH('running-vm', 'console')], { asUser: 'alice' });
    expect(console.stderr).toContain('User "alice" cannot get resource "virtualmachines/console"');
    expect([await served('PUT'), await served('GET')]).toEqual([puts, gets]);
  });

  it('lets a PrivilegedUser reach the console (a plain GET is then told to upgrade), and reads the VM as a User', async () => {
    const console = await kubectl(['get', '--raw', VM_PATH('running-vm', 'console')], { asUser: 'bob' });
    expect(console.stderr).toContain('Error from server (BadRequest)');
    expect(console.stderr).toContain('needs an Upgrade: websocket');
    const vm = await kubectl(['get', '--raw', `${GROUP_PATH}/namespaces/${NS}/virtualmachines/running-vm`], { asUser: 'alice' });
    expect(JSON.parse(vm.stdout)).toMatchObject({
      apiVersion: 'subresources.virtualization.deckhouse.io/v1alpha2',
      kind: 'VirtualMachine',
      metadata: { name: 'running-vm', namespace: NS },
    });
  });
});

/** A WebSocket to the apiserver (admin client certificate, optionally impersonating), as d8 v / virtctl open one. */
async function dialApiserver(path: string, asUser?: string): Promise<WebSocket> {
  const kc = cluster.apiserver.kubeConfig();
  const user = kc.getCurrentUser()!;
  const ws = new WebSocket(`${cluster.apiserver.server.replace(/^https/, 'wss')}${path}`, ['plain.virtualization.deckhouse.io'], {
    ca: await readFile(kc.getCurrentCluster()!.caFile!, 'utf8'),
    cert: await readFile(user.certFile!, 'utf8'),
    key: await readFile(user.keyFile!, 'utf8'),
    headers: asUser === undefined ? {} : { 'Impersonate-User': asUser },
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => reject(new Error(`HTTP ${res.statusCode}: ${body}`)));
    });
    ws.once('error', reject);
  });
}

/** Everything a socket receives, and a way to wait for a pattern in it. */
function collect(ws: WebSocket): { bytes: () => Buffer; text: () => string; until: (what: string, test: (all: Buffer) => boolean) => Promise<Buffer> } {
  let all = Buffer.alloc(0);
  ws.on('message', (data: Buffer) => (all = Buffer.concat([all, data])));
  return {
    bytes: () => all,
    text: () => all.toString('utf8'),
    until: (what, test) => waitFor(what, () => Promise.resolve(test(all) ? all : undefined), { timeoutMs: 15_000 }),
  };
}

const closed = (ws: WebSocket): Promise<{ code: number; reason: string }> =>
  new Promise((resolve) => ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString('utf8') })));

describe('streams through the aggregator (WebSocket)', () => {
  it('a console carries bytes both ways: the login prompt out, typed text echoed', async () => {
    const ws = await dialApiserver(VM_PATH('running-vm', 'console'));
    expect(ws.protocol).toBe('plain.virtualization.deckhouse.io');
    const got = collect(ws);
    await got.until('the login prompt', (b) => b.toString().endsWith('running-vm login: '));
    ws.send(Buffer.from('root\r'));
    await got.until('the echo and the password prompt', (b) => b.toString().endsWith('running-vm login: root\r\nPassword: '));
    const end = closed(ws);
    ws.close(1000, 'done');
    expect(await end).toEqual({ code: 1000, reason: 'done' });
    await waitFor('virt-api to see the console closed', () => Promise.resolve(virtApi.open.console === 0 ? true : undefined));
  });

  it('a PrivilegedUser may open the console; a User gets 403 from the apiserver', async () => {
    const ws = await dialApiserver(VM_PATH('running-vm', 'console'), 'bob');
    await collect(ws).until('the login prompt', (b) => b.toString().endsWith('login: '));
    ws.close();
    await expect(dialApiserver(VM_PATH('running-vm', 'console'), 'alice')).rejects.toThrow(/^HTTP 403: .*cannot get resource \\"virtualmachines\/console\\"/);
  });

  it('VNC answers the RFB 3.8 handshake up to ServerInit', async () => {
    const ws = await dialApiserver(VM_PATH('running-vm', 'vnc'));
    const got = collect(ws);
    await got.until('the RFB version', (b) => b.length >= 12);
    expect(got.bytes().subarray(0, 12).toString('latin1')).toBe('RFB 003.008\n');
    ws.send(Buffer.from('RFB 003.008\n', 'latin1'));
    await got.until('the security types', (b) => b.length >= 14);
    expect([...got.bytes().subarray(12, 14)]).toEqual([1, 1]);
    ws.send(Buffer.from([1]));
    await got.until('the security result', (b) => b.length >= 18);
    expect(got.bytes().readUInt32BE(14)).toBe(0);
    ws.send(Buffer.from([1]));
    const init = (await got.until('ServerInit', (b) => b.length >= 18 + 24 && b.length >= 18 + 24 + b.readUInt32BE(18 + 20))).subarray(18);
    expect([init.readUInt16BE(0), init.readUInt16BE(2)]).toEqual([320, 200]);
    expect(init.subarray(24, 24 + init.readUInt32BE(20)).toString('latin1')).toBe('virt-api stand-in');
    ws.close();
  });

  it('port forwarding carries binary bytes to the port and back', async () => {
    const ws = await dialApiserver(`${VM_PATH('running-vm', 'portforward')}?port=22&protocol=tcp`);
    const got = collect(ws);
    const payload = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 256));
    ws.send(payload);
    await got.until('the bytes back', (b) => b.length >= payload.length);
    expect(got.bytes().equals(payload)).toBe(true);
    ws.close();
  });

  it.each([
    ['a VM that does not exist', VM_PATH('ghost', 'console'), /^HTTP 404: .*"ghost\\" not found in namespace vms/],
    ['a VM that is not running', VM_PATH('stopped-vm', 'vnc'), /^HTTP 400: .*stopped-vm is Stopped: vnc needs it Running or Migrating/],
    ['a port that is no number', `${VM_PATH('running-vm', 'portforward')}?port=ssh`, /^HTTP 400: .*query port must be a port number/],
  ])('refuses %s before upgrading, naming it', async (_what, path, message) => {
    await expect(dialApiserver(path)).rejects.toThrow(message);
  });

  it('closes an open console with 1011 when virt-api dies, and answers 503 while it is down', async () => {
    const ws = await dialApiserver(VM_PATH('running-vm', 'console'));
    await collect(ws).until('the login prompt', (b) => b.toString().endsWith('login: '));
    const end = closed(ws);
    const port = virtApi.port;
    await virtApi.stop({ abrupt: true });
    try {
      expect(await end).toEqual({ code: 1011, reason: 'virt-api connection lost' });
      await expect(dialApiserver(VM_PATH('running-vm', 'console'))).rejects.toThrow(/^HTTP 503: .*virt-api at https:\/\/127\.0\.0\.1:\d+ is unreachable/);
    } finally {
      virtApi = await startVirtApi(pki, port);
    }
    const again = await dialApiserver(VM_PATH('running-vm', 'console'));
    await collect(again).until('the login prompt again', (b) => b.toString().endsWith('login: '));
    again.close();
  });

  it('refuses a stream without the front-proxy certificate (401) directly', async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${fn.port}${VM_PATH('running-vm', 'console')}`, ['plain.virtualization.deckhouse.io'], {
      ca: pki.caPem,
      servername: 'subresources-api.d8-virtualization.svc',
    } as WebSocket.ClientOptions);
    const status = await new Promise<number | undefined>((resolve) => {
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode));
      ws.once('open', () => resolve(undefined));
    });
    expect(status).toBe(401);
  });

  it('answers a broken WebSocket handshake 400 and lets go of the virt-api side it had opened', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: fn.port,
        path: VM_PATH('running-vm', 'console'),
        ca: pki.caPem,
        servername: 'subresources-api.d8-virtualization.svc',
        cert: pki.frontProxy.cert,
        key: pki.frontProxy.key,
        headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'not a key', 'X-Remote-User': 'admin' },
        agent: false,
      });
      req.on('response', (res) => resolve(String(res.statusCode)));
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    expect(answer).toBe('400');
    await waitFor('virt-api to see no console open', () => Promise.resolve(virtApi.open.console === 0 ? true : undefined));
  });
});

/** An HTTP/1.1 Upgrade to SPDY/3.1 to the apiserver as kubectl's SPDY round tripper sends it (POST, X-Stream-Protocol-Version), as admin or `asUser`. */
const spdyUpgrade = (path: string, asUser?: string): Promise<RawUpgrade> =>
  rawUpgrade(cluster.apiserver, 'POST', path, [
    'Upgrade: SPDY/3.1',
    'X-Stream-Protocol-Version: portforward.k8s.io',
    ...(asUser === undefined ? [] : [`Impersonate-User: ${asUser}`]),
  ]);

describe('streams through the aggregator (SPDY/3.1 upgrade, spliced)', () => {
  it('port forwarding: the 101 of virt-api comes back and bytes travel both ways', async () => {
    const before = virtApi.open.portforward;
    const up = await spdyUpgrade(`${VM_PATH('running-vm', 'portforward')}?port=22`);
    expect(up.status).toBe(101);
    expect(up.head).toMatch(/\r\nUpgrade: SPDY\/3\.1/i);
    expect(up.head).toMatch(/\r\nX-Stream-Protocol-Version: portforward\.k8s\.io/i);
    const payload = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
    up.socket.write(payload);
    await waitFor('the bytes back', () => Promise.resolve(up.received().length >= payload.length ? true : undefined), { timeoutMs: 30_000 });
    expect(up.received().equals(payload)).toBe(true);
    expect(virtApi.open.portforward).toBe(before + 1);
    up.socket.end();
    await waitFor('virt-api to see the stream closed', () => Promise.resolve(virtApi.open.portforward === before ? true : undefined));
  });

  it('console: the login prompt out, typed text echoed, for a PrivilegedUser; a User gets 403', async () => {
    const up = await spdyUpgrade(VM_PATH('running-vm', 'console'), 'bob');
    expect(up.status).toBe(101);
    await up.until('the login prompt', 'running-vm login: ');
    up.socket.write('root\r');
    await up.until('the echo and the password prompt', 'running-vm login: root\r\nPassword: ');
    up.socket.destroy();
    const refused = await spdyUpgrade(VM_PATH('running-vm', 'console'), 'alice');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('cannot create resource \\"virtualmachines/console\\"');
  });

  it("passes virt-api's refusal through with its status and message", async () => {
    const up = await spdyUpgrade(VM_PATH('running-vm', 'vnc'));
    expect(up.status).toBe(400);
    expect(JSON.parse(up.body)).toMatchObject({ kind: 'Status', code: 400, message: 'the virt-api stand-in serves vnc over WebSocket, not Upgrade: SPDY/3.1' });
  });

  it('answers 503 naming virt-api while it is down', async () => {
    const port = virtApi.port;
    await virtApi.stop();
    try {
      const up = await spdyUpgrade(`${VM_PATH('running-vm', 'portforward')}?port=22`);
      expect(up.status).toBe(503);
      expect(JSON.parse(up.body)).toMatchObject({ code: 503, message: expect.stringMatching(/^virt-api at https:\/\/127\.0\.0\.1:\d+ is unreachable/) });
    } finally {
      virtApi = await startVirtApi(pki, port);
    }
  });

  it('counts the spliced stream in subresources_streams_open while it lives', async () => {
    const up = await spdyUpgrade(`${VM_PATH('running-vm', 'portforward')}?port=80`);
    expect(up.status).toBe(101);
    const open = async (): Promise<number> => {
      const line = (await fn.metrics.expose()).split('\n').find((l) => l.startsWith('subresources_streams_open{subresource="portforward"}'));
      return Number(line?.split(' ').pop() ?? 0);
    };
    await waitFor('the stream counted', async () => ((await open()) === 1 ? true : undefined));
    up.socket.end();
    await waitFor('the stream no longer counted', async () => ((await open()) === 0 ? true : undefined));
  });
});

/** The session Lease of a VM's console or VNC, or undefined. */
async function sessionLease(kind: 'console' | 'vnc', vm: string): Promise<Lease | undefined> {
  const uid = (await kubectl(['get', 'virtualmachine.virtualization.deckhouse.io', vm, '-n', NS, '-o', 'jsonpath={.metadata.uid}'])).stdout;
  const res = await kubectl(['get', 'lease', `d8v-vm-${kind}-${vm}-${uid}`, '-n', NS, '-o', 'json']);
  return res.code === 0 ? (JSON.parse(res.stdout) as Lease) : undefined;
}

const probeSession = async (kind: 'console' | 'vnc', vm: string, asUser?: string): Promise<Record<string, unknown>> => {
  const res = await kubectl(['get', '--raw', `${VM_PATH(vm, kind)}?probe=true`], asUser === undefined ? {} : { asUser });
  if (res.code !== 0) throw new Error(res.stderr);
  return JSON.parse(res.stdout) as Record<string, unknown>;
};

describe('console and VNC sessions (advisory Leases)', () => {
  it('probe=true tells nobody holds the console, without connecting', async () => {
    const before = virtApi.open.console;
    expect(await probeSession('console', 'running-vm')).toEqual({
      apiVersion: 'subresources.virtualization.deckhouse.io/v1alpha2',
      kind: 'VirtualMachineSession',
      holder: '',
      startTime: null,
      client: '',
    });
    expect(virtApi.open.console).toBe(before);
  });

  it('an open console holds a Lease owned by the VM, renewed while it lives, shown by probe, deleted at the end', async () => {
    const ws = await dialApiserver(VM_PATH('running-vm', 'console'), 'bob');
    await collect(ws).until('the login prompt', (b) => b.toString().endsWith('login: '));
    const lease = await waitFor('the session Lease', () => sessionLease('console', 'running-vm'));
    const vmUid = (await kubectl(['get', 'virtualmachine.virtualization.deckhouse.io', 'running-vm', '-n', NS, '-o', 'jsonpath={.metadata.uid}'])).stdout;
    expect(lease.metadata).toMatchObject({
      labels: { 'virtualization.deckhouse.io/session': 'console' },
      annotations: { 'virtualization.deckhouse.io/session-id': expect.stringMatching(/^[0-9a-f-]{36}$/) },
      ownerReferences: [{ apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualMachine', name: 'running-vm', uid: vmUid }],
    });
    expect(lease.spec).toMatchObject({ holderIdentity: 'bob', leaseDurationSeconds: 30 });
    await waitFor('a renewal', async () => ((await sessionLease('console', 'running-vm'))?.spec?.renewTime !== lease.spec?.renewTime ? true : undefined));
    const probed = await probeSession('console', 'running-vm', 'bob');
    expect(probed).toMatchObject({ holder: 'bob', startTime: lease.spec?.acquireTime });
    expect(probed['client']).toBe(lease.metadata.annotations?.['virtualization.deckhouse.io/session-client']);
    ws.close();
    await waitFor('the Lease deleted', async () => ((await sessionLease('console', 'running-vm')) === undefined ? true : undefined));
  });

  it('taking over an open VNC session records a Warning event on the VM; only the last session deletes the Lease', async () => {
    const first = await dialApiserver(VM_PATH('running-vm', 'vnc'), 'bob');
    const firstId = (await waitFor('the first Lease', () => sessionLease('vnc', 'running-vm'))).metadata.annotations?.[
      'virtualization.deckhouse.io/session-id'
    ];
    const second = await dialApiserver(VM_PATH('running-vm', 'vnc'));
    const taken = await waitFor('the Lease taken over', async () => {
      const lease = await sessionLease('vnc', 'running-vm');
      return lease !== undefined && lease.metadata.annotations?.['virtualization.deckhouse.io/session-id'] !== firstId ? lease : undefined;
    });
    expect(taken.spec?.holderIdentity).not.toBe('bob');
    const event = await waitFor('the VNCSessionPreempted event', async () => {
      const res = await kubectl(['get', 'events.events.k8s.io', '-n', NS, '--field-selector', 'reason=VNCSessionPreempted', '-o', 'json']);
      return (JSON.parse(res.stdout) as { items: KubeEvent[] }).items[0];
    });
    expect(event).toMatchObject({ type: 'Warning', regarding: { kind: 'VirtualMachine', name: 'running-vm' } });
    expect(event.note).toMatch(/^vnc session of bob .* taken over by /);
    first.close();
    await waitFor('virt-api to see the first session closed', () => Promise.resolve(virtApi.open.vnc === 1 ? true : undefined));
    // The first session ending leaves the second's Lease alone.
    expect((await sessionLease('vnc', 'running-vm'))?.metadata.annotations?.['virtualization.deckhouse.io/session-id']).toBe(
      taken.metadata.annotations?.['virtualization.deckhouse.io/session-id'],
    );
    second.close();
    await waitFor('the Lease deleted', async () => ((await sessionLease('vnc', 'running-vm')) === undefined ? true : undefined));
  });

  it('port forwarding keeps no session; probe answers 404 for a VM that does not exist', async () => {
    const res = await kubectl(['get', '--raw', `${VM_PATH('ghost', 'console')}?probe=true`]);
    expect(res.stderr).toContain('Error from server (NotFound)');
    const ws = await dialApiserver(`${VM_PATH('running-vm', 'portforward')}?port=22`);
    const leases = await kubectl(['get', 'leases', '-n', NS, '-l', 'virtualization.deckhouse.io/session', '-o', 'name']);
    expect(leases.stdout).toBe('');
    ws.close();
  });
});

describe('virtualmachinepools/scaledownwith (never proxied)', () => {
  const POOL_PATH = `${GROUP_PATH}/namespaces/${NS}/virtualmachinepools`;
  const post = (pool: string, body: string): ReturnType<Cluster['kubectl']> =>
    kubectl(['create', '--raw', `${POOL_PATH}/${pool}/scaledownwith`, '-f', '-'], { stdin: body });
  const vmNames = async (): Promise<string[]> => {
    const res = await kubectl(['get', 'virtualmachines.virtualization.deckhouse.io', '-n', NS, '-o', 'name']);
    return res.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('/')[1] ?? '')
      .sort();
  };
  const replicas = async (): Promise<number> =>
    Number((await kubectl(['get', 'virtualmachinepools.virtualization.deckhouse.io', 'web', '-n', NS, '-o', 'jsonpath={.spec.replicas}'])).stdout);

  beforeAll(async () => {
    await cluster.apply(`apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachinePool
metadata: {name: web, namespace: ${NS}}
spec:
  replicas: 3
  scaleDownPolicy: Explicit
  virtualDiskTemplates: [{name: root, spec: {persistentVolumeClaim: {size: 1Gi}}}]
  virtualMachineTemplate:
    spec:
      cpu: {cores: 1}
      memory: {size: 1Gi}
      virtualMachineClassName: generic
      liveMigrationPolicy: PreferSafe
      blockDeviceRefs: [{kind: VirtualDisk, name: root}]
`);
    const uid = (await kubectl(['get', 'virtualmachinepools.virtualization.deckhouse.io', 'web', '-n', NS, '-o', 'jsonpath={.metadata.uid}'])).stdout;
    // Members as the pool controller makes them: the pool as controller, its uid label.
    for (const name of ['web-aaaaa', 'web-bbbbb', 'web-ccccc']) {
      await cluster.apply(
        vmYaml(name).replace(
          `metadata: {name: ${name}, namespace: ${NS}}`,
          `metadata:
  name: ${name}
  namespace: ${NS}
  labels: {vmpool.virtualization.deckhouse.io/pool-uid: ${uid}}
  ownerReferences: [{apiVersion: virtualization.deckhouse.io/v1alpha2, kind: VirtualMachinePool, name: web, uid: ${uid}, controller: true}]`,
        ),
      );
    }
  });

  it('deletes the named members and lowers spec.replicas by their number', async () => {
    const res = await post('web', JSON.stringify({ targets: ['web-aaaaa', 'web-bbbbb'] }));
    expect(res.stderr).toBe('');
    expect(JSON.parse(res.stdout)).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(await replicas()).toBe(1);
    expect(await vmNames()).not.toEqual(expect.arrayContaining(['web-aaaaa']));
    expect(await vmNames()).toEqual(expect.arrayContaining(['web-ccccc', 'running-vm']));
  });

  it('refuses a VM of no pool, an unknown VM, and bodies that are not JSON or have the wrong types, deleting nothing', async () => {
    const before = await vmNames();
    const cases: [string, string][] = [
      [JSON.stringify({ targets: ['web-ccccc', 'running-vm'] }), 'target VirtualMachine "running-vm" does not belong to VirtualMachinePool "web"'],
      [JSON.stringify({ targets: ['nope'] }), 'target VirtualMachine "nope" not found in namespace vms'],
      ['{"targets": [', 'is not valid JSON'],
      [JSON.stringify({ targets: 'web-ccccc' }), 'invalid scaleDownWith body: targets:'],
      [JSON.stringify({ targets: [] }), 'scaleDownWith requires a non-empty targets list'],
      [JSON.stringify({ targets: [7] }), 'invalid scaleDownWith body: targets.0:'],
    ];
    for (const [body, message] of cases) {
      const res = await post('web', body);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain(message);
    }
    expect(await vmNames()).toEqual(before);
    expect(await replicas()).toBe(1);
  });

  it('answers 404 naming a pool that does not exist', async () => {
    const res = await post('ghost', JSON.stringify({ targets: ['web-ccccc'] }));
    expect(res.stderr).toContain('virtualmachinepools.virtualization.deckhouse.io "ghost" not found');
  });
});
