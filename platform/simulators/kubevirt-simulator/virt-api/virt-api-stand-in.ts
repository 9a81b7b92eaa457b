/**
 * VirtApiStandIn: a stand-in for KubeVirt's virt-api, which cannot run here (no KubeVirt). It serves
 * the part of `subresources.kubevirt.io/v1` the subresources API calls, over mutual TLS: freeze,
 * unfreeze, addvolume, removevolume, addresourceclaim, removeresourceclaim and evacuatecancel answer
 * 200 and are recorded (path, identity headers, body), and addvolume/removevolume change the instance
 * as KubeVirt would when given `volumes`; console is a serial console with a login
 * prompt, vnc an RFB server with a grey screen (a VM with a real guest here: its own serial console and
 * screen, `guest-stream.ts`), portforward/<port> echoes the bytes it gets (a VM with a real guest
 * here: a TCP connection to that port of the guest, `qemu/port-forward.ts`). Streams
 * are WebSockets with subprotocol plain.kubevirt.io, binary messages; console and portforward also
 * take an `Upgrade: SPDY/3.1` (101, then raw bytes: no SPDY framing, see spdySession).
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { parseDurationMs } from '../../../../shared/config/index.js';
import { errorMessage, httpStatusOf } from '../../../../shared/errors/index.js';
import type { Logger } from '../../../../shared/log/index.js';
import { guestStream, type GuestSockets } from './guest-stream.js';
import { RfbServerSession } from './rfb.js';
import { SerialConsoleSession } from './serial-console.js';
import type { VolumeCalls } from './volumes.js';

/** The log line (with `port`) that says the stand-in serves. */
export const VIRT_API_LISTENING = 'virt-api stand-in listening';
const PLAIN_PROTOCOL = 'plain.kubevirt.io';
const SPDY = 'spdy/3.1';
const CALL_PATH = /^\/apis\/subresources\.kubevirt\.io\/v1\/namespaces\/([^/]+)\/(virtualmachineinstances|virtualmachines)\/([^/]+)\/([a-z]+)$/;
const STREAM_PATH =
  /^\/apis\/subresources\.kubevirt\.io\/v1\/namespaces\/([^/]+)\/virtualmachineinstances\/([^/]+)\/(console|vnc|portforward\/(\d+)(?:\/(tcp|udp))?)$/;
const VMI_CALLS = ['freeze', 'unfreeze', 'addvolume', 'removevolume', 'addresourceclaim', 'removeresourceclaim'];
const VM_CALLS = ['addvolume', 'removevolume', 'addresourceclaim', 'removeresourceclaim', 'evacuatecancel'];
const MAX_BODY = 1024 * 1024;

/** One call as virt-api received it. */
export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  readonly namespace: string;
  readonly name: string;
  readonly subresource: string;
  readonly remoteUser: string | undefined;
  readonly remoteGroups: readonly string[];
  /** The end user the caller names (X-Remote-Extra-Originating-User). */
  readonly originatingUser: string | undefined;
  readonly body: unknown;
}

export interface VirtApiStandInOptions {
  readonly host?: string;
  readonly port?: number;
  /** PEM serving pair and the CA client certificates must chain to; without them: plain HTTP (tests of the wire only). */
  readonly tls?: { readonly cert: string; readonly key: string; readonly clientCa: string };
  /**
   * Read the client CA from this file instead, again every second, so a CA that appears or rotates
   * later (the module CA the controller issues, in npm start) is followed; until it exists no client
   * certificate is accepted.
   */
  readonly clientCaFile?: string;
  readonly log: Logger;
  /** What addvolume/removevolume do to the instance, as KubeVirt (`volumes.ts`); without it they are only recorded. */
  readonly volumes?: VolumeCalls;
  /** Real guests: console and vnc of a VM that runs one carry its own serial and RFB streams (`guest-stream.ts`). */
  readonly guests?: GuestSockets | undefined;
  /** How many recorded calls are kept (oldest dropped). */
  readonly keepCalls?: number;
}

export class VirtApiStandIn {
  private server: Server | undefined;
  private readonly sockets = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has(PLAIN_PROTOCOL) ? PLAIN_PROTOCOL : false) });
  private readonly recorded: RecordedCall[] = [];
  private readonly spdy = new Set<Duplex>();
  private caTimer: NodeJS.Timeout | undefined;
  /** Streams open now, by kind. */
  readonly open = { console: 0, vnc: 0, portforward: 0 };

  constructor(private readonly options: VirtApiStandInOptions) {}

  get calls(): readonly RecordedCall[] {
    return this.recorded;
  }

  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  get url(): string {
    return `${this.options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const tls = this.options.tls;
    const handler = (req: IncomingMessage, res: ServerResponse): void => void this.serve(req, res);
    this.server =
      tls === undefined
        ? createHttpServer(handler)
        : createHttpsServer(
            { cert: tls.cert, key: tls.key, ...(tls.clientCa === '' ? {} : { ca: tls.clientCa }), requestCert: true, rejectUnauthorized: true },
            handler,
          );
    if (tls !== undefined && this.options.clientCaFile !== undefined) this.followClientCa(tls, this.options.clientCaFile);
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    const server = this.server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve());
    });
    this.options.log.info({ port: this.port, url: this.url, mtls: tls !== undefined }, VIRT_API_LISTENING);
  }

  private followClientCa(tls: { cert: string; key: string }, file: string): void {
    let last = '';
    const read = async (): Promise<void> => {
      const ca = await readFile(file, 'utf8').catch(() => '');
      if (ca === last || !(this.server instanceof HttpsServer)) return;
      last = ca;
      this.server.setSecureContext({ cert: tls.cert, key: tls.key, ...(ca === '' ? {} : { ca }) });
      this.options.log.info({ file }, 'virt-api stand-in client CA loaded');
    };
    void read();
    this.caTimer = setInterval(() => void read(), 1000);
    this.caTimer.unref();
  }

  /**
   * Stop listening and end every stream: with close code 1001, or, `abrupt`, by cutting the
   * connections without a close frame (as a crashed virt-api would).
   */
  async stop(opts: { abrupt?: boolean } = {}): Promise<void> {
    if (opts.abrupt !== true) for (const ws of this.sockets.clients) ws.close(1001, 'virt-api stand-in stopping');
    for (const ws of this.sockets.clients) ws.terminate();
    for (const socket of this.spdy) socket.destroy();
    clearInterval(this.caTimer);
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://host');
    const match = CALL_PATH.exec(url.pathname);
    const answer = (status: number, message: string): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: status < 400 ? 'Success' : 'Failure', message, code: status }));
    };
    if (match === null) return answer(404, `the virt-api stand-in serves no ${url.pathname}`);
    const [, namespace, kind, name, sub] = match as unknown as [string, string, string, string, string];
    if (!(kind === 'virtualmachineinstances' ? VMI_CALLS : VM_CALLS).includes(sub)) return answer(404, `no subresource ${sub} on ${kind}`);
    if (req.method !== 'PUT') return answer(405, `${sub} takes PUT`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY) return answer(413, `body over ${MAX_BODY} bytes`);
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch (err: unknown) {
      return answer(400, `body is not JSON: ${(err as Error).message}`);
    }
    const call: RecordedCall = {
      method: req.method,
      path: url.pathname,
      namespace: decodeURIComponent(namespace),
      name: decodeURIComponent(name),
      subresource: sub,
      remoteUser: req.headersDistinct['x-remote-user']?.[0],
      remoteGroups: req.headersDistinct['x-remote-group'] ?? [],
      originatingUser: req.headersDistinct['x-remote-extra-originating-user']?.[0],
      body,
    };
    this.recorded.push(call);
    if (this.recorded.length > (this.options.keepCalls ?? 1000)) this.recorded.shift();
    this.options.log.info(
      { sub, namespace: call.namespace, name: call.name, user: call.remoteUser, for: call.originatingUser, body },
      'virt-api stand-in call',
    );
    if (sub === 'freeze' || sub === 'unfreeze') {
      const refused = await this.fsFreeze(call, body);
      if (refused !== undefined) return answer(refused.status, refused.message);
    }
    const volumes = this.options.volumes;
    if (volumes !== undefined && (sub === 'addvolume' || sub === 'removevolume')) {
      try {
        await (sub === 'addvolume' ? volumes.addVolume(call.namespace, call.name, body) : volumes.removeVolume(call.namespace, call.name, body));
      } catch (err: unknown) {
        this.options.log.info({ err, sub, namespace: call.namespace, name: call.name }, 'virt-api stand-in call refused');
        return answer(httpStatusOf(err), errorMessage(err));
      }
    }
    res.writeHead(200);
    res.end();
  }

  /**
   * freeze / unfreeze of a VM with a real guest here: `guest-fsfreeze-freeze` / `-thaw` through its
   * guest agent (freeze thaws itself after the body's `unfreezeTimeout`, default 5m); otherwise only
   * recorded. Undefined when done, else the refusal: 400 for a bad `unfreezeTimeout`, 500 naming what
   * the guest agent did (as virt-api answers when virt-handler's call to the agent fails).
   */
  private async fsFreeze(call: RecordedCall, body: unknown): Promise<{ status: number; message: string } | undefined> {
    const guests = this.options.guests;
    if (guests?.fsFreeze === undefined) return undefined;
    let unfreezeMs: number | undefined;
    if (call.subresource === 'freeze') {
      const given = (body as { unfreezeTimeout?: unknown } | undefined)?.unfreezeTimeout;
      unfreezeMs = given === undefined ? undefined : typeof given === 'string' ? parseDurationMs(given) : undefined;
      if (given !== undefined && (unfreezeMs === undefined || unfreezeMs <= 0)) {
        return { status: 400, message: `unfreezeTimeout: ${JSON.stringify(given)} is not a duration such as 30s or 5m` };
      }
    }
    try {
      await guests.fsFreeze(call.namespace, call.name, call.subresource === 'freeze' ? 'freeze' : 'thaw', unfreezeMs);
      return undefined;
    } catch (err: unknown) {
      this.options.log.warn({ err, vm: `${call.namespace}/${call.name}`, sub: call.subresource }, 'virt-api stand-in: the guest agent failed');
      return { status: 500, message: `${call.subresource} of ${call.namespace}/${call.name}: ${errorMessage(err)}` };
    }
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://host');
    const match = STREAM_PATH.exec(url.pathname);
    if (match === null) {
      socket.end(`HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    const vm = {
      namespace: decodeURIComponent(match[1]),
      name: decodeURIComponent(match[2]),
      port: match[4] === undefined || match[5] === 'udp' ? undefined : Number(match[4]),
    };
    const kind = match[3].startsWith('portforward') ? 'portforward' : (match[3] as 'console' | 'vnc');
    const protocol = (req.headers.upgrade ?? '').toLowerCase();
    if (protocol === 'websocket') {
      this.sockets.handleUpgrade(req, socket, head, (ws) => this.session(ws, kind, vm));
      return;
    }
    if (protocol !== SPDY || kind === 'vnc') {
      const body = JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: `the virt-api stand-in serves ${kind} over WebSocket${kind === 'vnc' ? '' : ' or SPDY/3.1'}, not Upgrade: ${req.headers.upgrade ?? ''}`,
        reason: 'BadRequest',
        code: 400,
      });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.spdySession(req, socket, head, kind, vm);
  }

  /**
   * An SPDY/3.1 upgrade, as kubectl-style clients send it: answered 101 (with the first offered
   * X-Stream-Protocol-Version), then the raw bytes go to the same console or echo as a WebSocket's.
   * A stand-in: it does not speak SPDY framing (no streams, no headers frames), it only proves that
   * the bytes after the upgrade travel both ways.
   */
  private spdySession(req: IncomingMessage, socket: Duplex, head: Buffer, kind: 'console' | 'portforward', vm: Vm): void {
    const offered = req.headersDistinct['x-stream-protocol-version']?.[0];
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n${offered === undefined ? '' : `X-Stream-Protocol-Version: ${offered}\r\n`}\r\n`,
    );
    this.open[kind]++;
    this.spdy.add(socket);
    const send = (bytes: Buffer): void => {
      if (socket.writable) socket.write(bytes);
    };
    const { receive, end } = this.stream(kind, vm, send, () => socket.end());
    if (head.length > 0) receive(head);
    socket.on('data', (b: Buffer) => receive(b));
    socket.on('end', () => socket.end());
    socket.on('error', (err) => this.options.log.debug({ err }, 'virt-api stand-in SPDY stream error'));
    socket.once('close', () => {
      end();
      this.open[kind]--;
      this.spdy.delete(socket);
    });
  }

  private session(ws: WebSocket, kind: 'console' | 'vnc' | 'portforward', vm: Vm): void {
    this.open[kind]++;
    const send = (bytes: Buffer): void => {
      if (ws.readyState === ws.OPEN) ws.send(bytes, { binary: true });
    };
    const { receive, end } = this.stream(kind, vm, send, (reason, code = 1011) => ws.close(code, reason.slice(0, 120)));
    ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) =>
      receive(Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)),
    );
    ws.on('error', (err) => this.options.log.debug({ err }, 'virt-api stand-in stream error'));
    ws.once('close', () => {
      end();
      this.open[kind]--;
    });
  }

  /**
   * What a stream's bytes go to: a real guest's serial console or screen where the VM runs one here,
   * else the imitation (getty-like console, grey RFB screen); port-forward echoes.
   */
  private stream(kind: 'console' | 'vnc' | 'portforward', vm: Vm, send: (b: Buffer) => void, close: (reason: string, code?: number) => void): StreamEnd {
    const guests = this.options.guests;
    const target =
      kind === 'portforward'
        ? vm.port === undefined
          ? undefined
          : guests?.forwardPort?.(vm.namespace, vm.name, vm.port)
        : guests?.socketOf(vm.namespace, vm.name, kind === 'console' ? 'serial' : 'vnc');
    if (target !== undefined) {
      this.options.log.info({ vm: `${vm.namespace}/${vm.name}`, kind, port: vm.port }, 'stream relayed to the real guest');
      return guestStream(target, send, close);
    }
    const none = (): void => undefined;
    if (kind === 'console') {
      const console = new SerialConsoleSession(vm.name, send);
      return { receive: (b) => console.receive(b), end: none };
    }
    if (kind === 'vnc') {
      const rfb = new RfbServerSession(send, (reason) => close(reason, 1002));
      return { receive: (b) => rfb.receive(b), end: none };
    }
    return { receive: send, end: none };
  }
}

type Vm = { namespace: string; name: string; port?: number | undefined };
type StreamEnd = { receive: (bytes: Buffer) => void; end: () => void };
