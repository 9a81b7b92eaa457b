/**
 * console, port-forward (listeners and --stdio), vnc and ssh against a stand-in subresources server
 * (plain HTTP + WebSocket on port 0, named as such: no apiserver here): how the CLI dials, carries
 * bytes, and classifies refusals and close frames. Through the real aggregator: tests/integration/cli/.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { waitFor } from '../testing/wait.js';
import { untilEscape } from './console.js';
import { parsePortMapping } from './forward.js';
import { run } from './program.js';
import { parseSshTarget, proxyCommand, scpPaths, shellQuote, sshArgs } from './ssh.js';
import { STREAM_PROTOCOL, closeError } from './stream.js';

const SUB = '/apis/subresources.virtualization.deckhouse.io/v1alpha2/namespaces/ns/virtualmachines/';
const VMS = '/apis/virtualization.deckhouse.io/v1alpha2/namespaces/ns/virtualmachines/';

/** Stand-in for the subresources API: VMs `vm` and `down` exist; `down`'s backend answers 503. */
class StandInSubresourceServer {
  readonly upgrades: { path: string; query: URLSearchParams; protocol: string; auth: string | undefined }[] = [];
  private readonly wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has(STREAM_PROTOCOL) ? STREAM_PROTOCOL : false) });
  private readonly server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const name = path.slice(VMS.length);
    if (path.startsWith(VMS) && (name === 'vm' || name === 'down')) {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'VirtualMachine', metadata: { name, namespace: 'ns' } }));
    } else {
      res
        .writeHead(404, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: `virtualmachine "${name}" not found` }));
    }
  });

  async start(): Promise<string> {
    this.server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const [vm, kind] = url.pathname.slice(SUB.length).split('/');
      this.upgrades.push({
        path: url.pathname,
        query: url.searchParams,
        protocol: String(req.headers['sec-websocket-protocol']),
        auth: req.headers.authorization,
      });
      if (vm === 'down') {
        const body = JSON.stringify({ kind: 'Status', code: 503, reason: 'ServiceUnavailable', message: 'virt-api is unavailable' });
        socket.end(`HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.session(ws, kind ?? '', url.searchParams));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'd8v-sessions-'));
    const path = join(dir, 'kubeconfig');
    const server = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: { token: 'secret' } }],
        contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'ns' } }],
        'current-context': 'ctx',
      }),
    );
    return path;
  }

  /** console: a prompt, then echo; portforward: port 22 answers an SSH banner, others echo; `close-4000` closes with 4000. */
  private session(ws: WebSocket, kind: string, query: URLSearchParams): void {
    if (kind === 'console') ws.send(Buffer.from('stand-in login: '));
    if (kind === 'portforward' && query.get('port') === '22') ws.send(Buffer.from('SSH-2.0-StandIn_1.0\r\n'));
    ws.on('message', (data: Buffer) => {
      if (data.toString() === 'close-4000') ws.close(4000, 'told to');
      else ws.send(data);
    });
  }

  stop(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function sink(): { stream: PassThrough; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('sessions (stand-in subresources server)', () => {
  const standIn = new StandInSubresourceServer();
  let kubeconfig = '';
  beforeAll(async () => {
    kubeconfig = await standIn.start();
  });
  afterAll(() => standIn.stop());

  const start = (args: string[], stdin = new PassThrough()) => {
    const out = sink();
    const err = sink();
    const stop = new AbortController();
    const done = run([...args, '--kubeconfig', kubeconfig], { stdin, stdout: out.stream, stderr: err.stream }, { signal: stop.signal, self: ['d8v'] });
    return { out, err, stop, done, stdin };
  };

  it('console dials with the Deckhouse subprotocol and the token, carries bytes both ways, and Ctrl+] leaves with 0', async () => {
    const s = start(['console', 'vm']);
    await waitFor('prompt', () => s.out.text().includes('stand-in login: '));
    s.stdin.write('root\r');
    await waitFor('echo', () => s.out.text().includes('root\r'));
    s.stdin.write(Buffer.from([0x61, 0x1d, 0x62]));
    expect(await s.done).toBe(0);
    expect(s.out.text()).toBe('stand-in login: root\ra');
    expect(s.err.text()).toContain('Press Ctrl+] to leave');
    expect(standIn.upgrades.at(-1)).toMatchObject({ path: `${SUB}vm/console`, protocol: STREAM_PROTOCOL, auth: 'Bearer secret' });
  });

  it('a console whose backend is down exits 5 with the server message; a missing VM exits 3', async () => {
    const down = start(['console', 'down']);
    expect(await down.done).toBe(5);
    expect(down.err.text()).toContain('console VirtualMachine ns/down: virt-api is unavailable');
    const missing = start(['console', 'ghost']);
    expect(await missing.done).toBe(3);
  });

  it('a session the server closes with an error code exits 1 naming the code', async () => {
    const s = start(['console', 'vm']);
    await waitFor('prompt', () => s.out.text().includes('login: '));
    s.stdin.write('close-4000');
    expect(await s.done).toBe(1);
    expect(s.err.text()).toContain('closed by the server (4000 told to)');
  });

  it('port-forward listens on every mapping, each connection is its own stream, Ctrl-C stops with 0', async () => {
    const s = start(['port-forward', 'vm', ':8080', ':9090']);
    const ports = await waitFor('two listeners', () => {
      const found = [...s.out.text().matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> VirtualMachine ns\/vm port (\d+)/g)];
      return found.length === 2 && found.map((m) => ({ local: Number(m[1]), remote: Number(m[2]) }));
    });
    expect(ports.map((p) => p.remote)).toEqual([8080, 9090]);
    for (const p of ports) {
      const socket = net.connect(p.local, '127.0.0.1');
      const got: Buffer[] = [];
      socket.on('data', (c: Buffer) => got.push(c));
      socket.write(`hello ${p.remote}`);
      await waitFor(`echo on ${p.remote}`, () => Buffer.concat(got).toString() === `hello ${p.remote}`);
      socket.end();
    }
    expect(standIn.upgrades.filter((u) => u.path === `${SUB}vm/portforward`).map((u) => [u.query.get('port'), u.query.get('protocol')])).toEqual(
      expect.arrayContaining([
        ['8080', 'tcp'],
        ['9090', 'tcp'],
      ]),
    );
    s.stop.abort();
    expect(await s.done).toBe(0);
  });

  it('vnc serves one local port for a viewer', async () => {
    const s = start(['vnc', 'vm']);
    const port = Number(await waitFor('listener', () => /127\.0\.0\.1:(\d+) -> VNC of VirtualMachine ns\/vm/.exec(s.out.text())?.[1]));
    const socket = net.connect(port, '127.0.0.1');
    socket.write('RFB 003.008\n');
    const got: Buffer[] = [];
    socket.on('data', (c: Buffer) => got.push(c));
    await waitFor('bytes back', () => Buffer.concat(got).toString() === 'RFB 003.008\n');
    socket.destroy();
    await waitFor('vnc upgrade', () => standIn.upgrades.some((u) => u.path === `${SUB}vm/vnc`));
    s.stop.abort();
    expect(await s.done).toBe(0);
  });

  it('a local port already taken exits 2 naming it', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const s = start(['port-forward', 'vm', `${port}:80`]);
      expect(await s.done).toBe(2);
      expect(s.err.text()).toContain(`error: the forward to VirtualMachine ns/vm port 80 cannot listen on 127.0.0.1:${port}: address already in use`);
    } finally {
      taken.close();
    }
  });

  it('ssh runs the system ssh with d8v port-forward --stdio as its ProxyCommand, which reaches the VM port', async () => {
    const d8v = join(import.meta.dirname, 'd8v.js');
    const child = spawn(
      process.execPath,
      [
        d8v,
        'ssh',
        'alice@vm',
        '--kubeconfig',
        kubeconfig,
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=DEBUG1',
        '--',
        'true',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    // The stand-in only answers SSH's identification line: ssh saw it through the tunnel, then gave up (255).
    expect(stderr).toMatch(/remote software version StandIn_1\.0/);
    expect(stderr).toMatch(/Executing proxy command: exec .*d8v\.js port-forward --stdio -n ns --kubeconfig .* vm 22/);
    expect(code).toBe(255);
  });
});

describe('helpers', () => {
  it('port mappings: REMOTE, LOCAL:REMOTE and :REMOTE', () => {
    expect(parsePortMapping('22')).toEqual({ local: 22, remote: 22 });
    expect(parsePortMapping('2222:22')).toEqual({ local: 2222, remote: 22 });
    expect(parsePortMapping(':22')).toEqual({ local: 0, remote: 22 });
    for (const bad of ['', '0', 'a:22', '22:', '1:2:3', '65536', '-1:22']) expect(() => parsePortMapping(bad)).toThrow(/not a port mapping/);
  });

  it('ssh targets, quoting and arguments', () => {
    expect(parseSshTarget('vm')).toEqual({ vm: 'vm' });
    expect(parseSshTarget('a@b@vm')).toEqual({ user: 'a@b', vm: 'vm' });
    expect(() => parseSshTarget('alice@')).toThrow(/\[USER@\]VM/);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    const proxy = proxyCommand(['/usr/bin/node', '/opt/my d8v.js'], { kubeconfig: '/k', context: 'c' }, 'ns', 'vm', 2222);
    expect(proxy).toBe(`/usr/bin/node '/opt/my d8v.js' port-forward --stdio -n ns --kubeconfig /k --context c vm 2222`);
    expect(sshArgs('P', 'ns', { vm: 'vm', user: 'root' }, { port: 22, identityFile: '/id', options: ['A=b'] }, ['uname', '-a'])).toEqual([
      '-o',
      'ProxyCommand=P',
      '-o',
      'HostKeyAlias=vm/vm.ns',
      '-i',
      '/id',
      '-o',
      'A=b',
      '-l',
      'root',
      'vm.ns',
      '--',
      'uname',
      '-a',
    ]);
  });

  it('scp paths: the VM side gets its namespace, the local side is kept', () => {
    expect(scpPaths('ns', 'root@vm:/etc/hosts', './hosts')).toEqual({ vm: 'vm', paths: ['root@vm.ns:/etc/hosts', './hosts'] });
    expect(scpPaths('ns', '/tmp/a', 'vm:')).toEqual({ vm: 'vm', paths: ['/tmp/a', 'vm.ns:'] });
  });

  it('untilEscape passes bytes up to Ctrl+] and then ends', async () => {
    const source = new PassThrough();
    const out = untilEscape(source);
    const got: Buffer[] = [];
    out.on('data', (c: Buffer) => got.push(c));
    const ended = new Promise((resolve) => out.once('end', resolve));
    source.write('ab');
    source.write(Buffer.from([0x63, 0x1d, 0x64]));
    source.write('ignored');
    await ended;
    expect(Buffer.concat(got).toString()).toBe('abc');
  });

  it('close codes: normal ends are fine, lost or overloaded backends are unavailable, the rest failed', () => {
    expect(closeError('x', 1000, '')).toBeUndefined();
    expect(closeError('x', 1005, '')).toBeUndefined();
    expect(closeError('x', 1011, 'virt-api connection lost')?.constructor.name).toBe('UnavailableError');
    expect(closeError('x', 1006, '')?.constructor.name).toBe('UnavailableError');
    expect(closeError('x', 4000, 'no')?.message).toBe('x: closed by the server (4000 no)');
  });
});
