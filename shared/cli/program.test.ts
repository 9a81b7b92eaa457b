/**
 * The d8v command line in-process: argument errors and their exit codes, and the operation commands
 * against a scripted fake apiserver (plain HTTP on port 0, the real transport), which can answer what
 * a real one does not produce on demand (a 403 on create, an operation stuck InProgress). The real
 * apiserver and controller are in tests/integration/cli/.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { waitFor } from '../testing/wait.js';
import { run } from './program.js';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function d8v(args: string[], signal: AbortSignal = new AbortController().signal): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]): PassThrough => new PassThrough().on('data', (c: Buffer) => into.push(c.toString('utf8')));
  const code = await run(args, { stdin: new PassThrough(), stdout: sink(out), stderr: sink(err) }, { signal, self: ['d8v'], pollMs: 20 });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

function kubeconfigFor(server: string, namespace = 'ns'): string {
  const dir = mkdtempSync(join(tmpdir(), 'd8v-test-'));
  const path = join(dir, 'kubeconfig');
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 'secret' } }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace } }],
      'current-context': 'ctx',
    }),
  );
  return path;
}

describe('arguments', () => {
  it('--help on the program and on a command exits 0 and lists the exit codes', async () => {
    const top = await d8v(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/Exit codes:[\s\S]*3 +the VirtualMachine \(or namespace\) was not found/);
    for (const cmd of [
      'start',
      'stop',
      'restart',
      'migrate',
      'console',
      'vnc',
      'port-forward',
      'ssh',
      'scp',
      'freeze',
      'unfreeze',
      'addvolume',
      'removevolume',
    ]) {
      const help = await d8v([cmd, '--help']);
      expect({ cmd, code: help.code }).toEqual({ cmd, code: 0 });
      expect(help.stdout).toContain(`Usage: d8v ${cmd}`);
      expect(help.stdout).toContain('--namespace');
    }
  });

  it.each([
    ['no command', [], /Usage: d8v/],
    ['an unknown command', ['reboot', 'vm'], /unknown command 'reboot'/],
    ['a missing VM', ['restart'], /missing required argument 'vm'/],
    ['a duration that is not one', ['restart', 'vm', '--timeout', 'soon'], /argument 'soon' is invalid/],
    ['an unknown option', ['stop', 'vm', '--gracefully'], /unknown option '--gracefully'/],
    ['start with --force (a start cannot be forced)', ['start', 'vm', '--force'], /unknown option '--force'/],
    ['a node selector without =', ['migrate', 'vm', '--node-selector', 'zone'], /expected KEY=VALUE/],
    ['a port mapping that is not one', ['port-forward', 'vm', '80:http'], /not a port mapping/],
    ['a remote port out of range', ['port-forward', 'vm', '8080:70000'], /not a port mapping/],
    ['--stdio with two ports', ['port-forward', 'vm', '22', '80', '--stdio'], /exactly one REMOTE port/],
    ['a VNC port out of range', ['vnc', 'vm', '--port', '65536'], /expected a port/],
    ['an unknown volume kind', ['addvolume', 'vm', 'disk', '--volume-kind', 'Floppy'], /Allowed choices are VirtualDisk/],
    ['scp between two local paths', ['scp', 'a', 'b'], /exactly one of SOURCE and DESTINATION/],
    ['scp between two VMs', ['scp', 'vm1:a', 'vm2:b'], /exactly one of SOURCE and DESTINATION/],
    ['ssh to an empty user', ['ssh', '@vm'], /is not \[USER@\]VM/],
    ['a freeze timeout that is not a duration', ['freeze', 'vm', '--unfreeze-timeout', 'later'], /expected a duration/],
  ])('%s exits 2 with a message naming the problem', async (_what, args, message) => {
    const ran = await d8v(['--kubeconfig', kubeconfigFor('http://127.0.0.1:1'), ...args]);
    expect(ran.code).toBe(2);
    expect(ran.stderr + ran.stdout).toMatch(message);
  });

  it('a kubeconfig that does not exist, or a context it lacks, exits 2 naming it', async () => {
    const missing = await d8v(['restart', 'vm', '--kubeconfig', '/nonexistent/kubeconfig']);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot read the kubeconfig /nonexistent/kubeconfig') });
    const context = await d8v(['restart', 'vm', '--kubeconfig', kubeconfigFor('http://127.0.0.1:1'), '--context', 'prod']);
    expect(context).toMatchObject({ code: 2, stderr: expect.stringContaining('no context "prod" (it has: ctx)') });
  });

  it('an apiserver nobody listens on exits 5', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const ran = await d8v(['restart', 'vm', '--kubeconfig', kubeconfigFor(`http://127.0.0.1:${port}`)]);
    expect(ran.code).toBe(5);
    expect(ran.stderr).toContain('get VirtualMachine ns/vm');
  });
});

/** A fake apiserver: a VM `vm` in `ns`, operations whose phases follow a script per VM. */
class FakeApiServer {
  readonly requests: { method: string; path: string; body: unknown; auth: string | undefined }[] = [];
  /** Phases the next created operation goes through, one per GET. */
  phases: { phase: string; progress?: string; reason?: string; message?: string }[] = [];
  createStatus = 201;
  private created: Record<string, unknown> | undefined;
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => this.answer(req, res, chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined));
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return kubeconfigFor(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}`);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): void {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    this.requests.push({ method: req.method ?? '', path, body, auth: req.headers.authorization });
    const send = (status: number, obj: unknown): void => {
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(obj));
    };
    const base = '/apis/virtualization.deckhouse.io/v1alpha2/namespaces/ns';
    if (req.method === 'GET' && path === `${base}/virtualmachines/vm`) {
      send(200, { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualMachine', metadata: { name: 'vm', namespace: 'ns' } });
    } else if (req.method === 'POST' && path === `${base}/virtualmachineoperations`) {
      if (this.createStatus !== 201) {
        send(this.createStatus, {
          kind: 'Status',
          status: 'Failure',
          reason: 'Forbidden',
          message: 'user "u" cannot create virtualmachineoperations',
          code: this.createStatus,
        });
        return;
      }
      const op = body as { metadata: { generateName: string } };
      this.created = { ...op, metadata: { ...op.metadata, name: `${op.metadata.generateName}x1y2z`, resourceVersion: '1' } };
      send(201, this.created);
    } else if (req.method === 'GET' && this.created && path === `${base}/virtualmachineoperations/${(this.created['metadata'] as { name: string }).name}`) {
      const step = this.phases.length > 1 ? this.phases.shift() : this.phases[0];
      const conditions = step?.reason
        ? [
            {
              type: 'Completed',
              status: step.phase === 'Completed' ? 'True' : 'False',
              reason: step.reason,
              message: step.message ?? '',
              lastTransitionTime: '2026-12-03T00:00:00Z',
            },
          ]
        : undefined;
      send(200, { ...this.created, status: step ? { phase: step.phase, progress: step.progress, conditions } : undefined });
    } else {
      send(404, {
        kind: 'Status',
        status: 'Failure',
        reason: 'NotFound',
        message: `virtualmachines.virtualization.deckhouse.io "${path.split('/').pop() ?? ''}" not found`,
        code: 404,
      });
    }
  }
}

describe('operations (fake apiserver)', () => {
  const api = new FakeApiServer();
  let kubeconfig = '';
  beforeAll(async () => {
    kubeconfig = await api.start();
  });
  afterAll(() => api.stop());

  it('restart creates a Restart operation in the context namespace, prints its progress, exits 0 once Completed', async () => {
    api.phases = [
      { phase: 'Pending' },
      { phase: 'InProgress', progress: '50%', reason: 'RestartInProgress' },
      { phase: 'Completed', progress: '100%', reason: 'OperationCompleted' },
    ];
    const ran = await d8v(['restart', 'vm', '--kubeconfig', kubeconfig, '--force']);
    expect(ran).toMatchObject({ code: 0, stdout: 'VirtualMachine ns/vm restarted (virtualmachineoperation/restart-vm-x1y2z Completed)\n' });
    expect(ran.stderr.split('\n')).toEqual([
      'VirtualMachineOperation ns/restart-vm-x1y2z created: Restart of VirtualMachine vm',
      'VirtualMachineOperation ns/restart-vm-x1y2z: Pending',
      'VirtualMachineOperation ns/restart-vm-x1y2z: InProgress 50% (RestartInProgress)',
      'VirtualMachineOperation ns/restart-vm-x1y2z: Completed 100% (OperationCompleted)',
      '',
    ]);
    const create = api.requests.find((r) => r.method === 'POST');
    expect(create?.body).toMatchObject({
      kind: 'VirtualMachineOperation',
      metadata: { namespace: 'ns', generateName: 'restart-vm-' },
      spec: { type: 'Restart', virtualMachineName: 'vm', force: true },
    });
    expect(create?.auth).toBe('Bearer secret');
  });

  it('migrate sends the node selector; a Failed operation exits 1 with its reason and message', async () => {
    api.phases = [{ phase: 'Failed', reason: 'NotApplicableForVirtualMachinePhase', message: 'the VM is Stopped' }];
    const ran = await d8v(['migrate', 'vm', '--node-selector', 'zone=b', '--node-selector', 'disk=ssd', '--kubeconfig', kubeconfig]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('error: VirtualMachineOperation ns/migrate-vm-x1y2z Failed: NotApplicableForVirtualMachinePhase: the VM is Stopped');
    expect(api.requests.filter((r) => r.method === 'POST').pop()?.body).toMatchObject({
      spec: { type: 'Migrate', migrate: { nodeSelector: { zone: 'b', disk: 'ssd' } } },
    });
  });

  it('a superseded operation exits 1', async () => {
    api.phases = [{ phase: 'Superseded', reason: 'Superseded' }];
    expect((await d8v(['stop', 'vm', '--kubeconfig', kubeconfig])).code).toBe(1);
  });

  it('an operation still running at --timeout exits 6 and says it goes on', async () => {
    api.phases = [{ phase: 'InProgress', progress: '10%', reason: 'Syncing' }];
    const ran = await d8v(['migrate', 'vm', '--timeout', '200ms', '--kubeconfig', kubeconfig]);
    expect(ran.code).toBe(6);
    expect(ran.stderr).toMatch(/not finished after 0.2 s \(last: InProgress 10% \(Syncing\)\); it goes on/);
  });

  it('Ctrl-C while waiting exits 130 and leaves the operation running', async () => {
    api.phases = [{ phase: 'InProgress', reason: 'StopInProgress' }];
    const stop = new AbortController();
    const before = api.requests.length;
    const running = d8v(['stop', 'vm', '--kubeconfig', kubeconfig], stop.signal);
    // Ctrl-C once the command is waiting: the operation is created and has been read back at least once.
    await waitFor('the CLI polling its created operation', () =>
      api.requests.slice(before).some((r) => r.method === 'GET' && r.path.endsWith('/virtualmachineoperations/stop-vm-x1y2z')),
    );
    stop.abort();
    const ran = await running;
    expect(ran.code).toBe(130);
    expect(ran.stderr).toContain('stopped waiting; VirtualMachineOperation ns/stop-vm-x1y2z goes on');
  });

  it('--no-wait prints the created operation and exits 0 without reading it again', async () => {
    const before = api.requests.length;
    const ran = await d8v(['start', 'vm', '--no-wait', '--kubeconfig', kubeconfig]);
    expect(ran).toMatchObject({ code: 0, stdout: 'virtualmachineoperation/start-vm-x1y2z created\n' });
    // Only this command's requests: the aborted wait of the test before may still land its last poll late.
    const base = '/apis/virtualization.deckhouse.io/v1alpha2/namespaces/ns';
    const mine = api.requests.slice(before).filter((r) => !r.path.endsWith('/stop-vm-x1y2z'));
    expect(mine.map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${base}/virtualmachines/vm`, `POST ${base}/virtualmachineoperations`]);
  });

  it('a VM that does not exist exits 3 naming it, and nothing is created', async () => {
    const before = api.requests.length;
    const ran = await d8v(['restart', 'ghost', '-n', 'ns', '--kubeconfig', kubeconfig]);
    expect(ran.code).toBe(3);
    expect(ran.stderr).toContain('get VirtualMachine ns/ghost');
    expect(api.requests.slice(before).map((r) => r.method)).toEqual(['GET']);
  });

  it('a create the apiserver forbids exits 4 with its message', async () => {
    api.createStatus = 403;
    try {
      const ran = await d8v(['restart', 'vm', '--kubeconfig', kubeconfig]);
      expect(ran.code).toBe(4);
      expect(ran.stderr).toContain('cannot create virtualmachineoperations');
    } finally {
      api.createStatus = 201;
    }
  });
});
