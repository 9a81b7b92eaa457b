/**
 * virt-api, the backend: `subresources.kubevirt.io/v1` over mutual TLS. Calls carry this function's
 * own identity (X-Remote-User/Group, as the original) and the end user as an extra header; the user
 * was already authorized by the kube-apiserver before the request reached us.
 */
import { readFile } from 'node:fs/promises';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { errorMessage } from '../../shared/errors/index.js';
import type { RemoteUser } from './frontproxy.js';

export const KUBEVIRT_BASE = '/apis/subresources.kubevirt.io/v1';

export interface BackendOptions {
  readonly url: string;
  readonly caFile: string | undefined;
  readonly certFile: string | undefined;
  readonly keyFile: string | undefined;
  readonly reloadMs: number;
  readonly remoteUser: string;
  readonly remoteGroups: readonly string[];
  readonly timeoutMs: number;
}

/** virt-api could not be reached or broke off: the answer is 503 naming why. */
export class BackendUnavailableError extends Error {}

interface TlsMaterial {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface BackendAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export class VirtApi {
  private tls: { material: TlsMaterial; readAt: number } | undefined;

  constructor(private readonly options: BackendOptions) {}

  get url(): string {
    return this.options.url;
  }

  /** The client TLS files, read again after `reloadMs` (a rotated Secret is picked up without a restart). */
  private async material(): Promise<TlsMaterial> {
    if (this.tls !== undefined && Date.now() - this.tls.readAt < this.options.reloadMs) return this.tls.material;
    const { caFile, certFile, keyFile } = this.options;
    const read = (f: string | undefined): Promise<string | undefined> => (f === undefined ? Promise.resolve(undefined) : readFile(f, 'utf8'));
    try {
      const [ca, cert, key] = await Promise.all([read(caFile), read(certFile), read(keyFile)]);
      const material: TlsMaterial = { ...(ca === undefined ? {} : { ca }), ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) };
      this.tls = { material, readAt: Date.now() };
      return material;
    } catch (err: unknown) {
      throw new BackendUnavailableError(`cannot read the virt-api TLS files: ${errorMessage(err)}`);
    }
  }

  private headers(user: RemoteUser): Record<string, string | string[]> {
    return {
      'x-remote-user': this.options.remoteUser,
      'x-remote-group': [...this.options.remoteGroups],
      'x-remote-extra-originating-user': user.name,
    };
  }

  /**
   * A plain request (PUT with a JSON body); any HTTP answer is returned, only transport failures throw.
   * It accepts JSON and any other answer type, as client-go does: virt-api's volume routes
   * declare no type they produce, and go-restful answers 406 to a request that accepts JSON only.
   */
  async call(method: string, path: string, body: Buffer, user: RemoteUser, signal?: AbortSignal): Promise<BackendAnswer> {
    const target = new URL(this.options.url.replace(/\/$/, '') + path);
    const tls = await this.material();
    const options: RequestOptions = {
      method,
      headers: { ...this.headers(user), 'content-type': 'application/json', 'content-length': String(body.length), accept: 'application/json, */*' },
      timeout: this.options.timeoutMs,
      ...(signal === undefined ? {} : { signal }),
      ...tls,
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<BackendAnswer>((resolve, reject) => {
      const req = send(target, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (err) => reject(new BackendUnavailableError(`virt-api broke off its answer: ${errorMessage(err)}`)));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)));
      req.on('error', (err) => reject(new BackendUnavailableError(`virt-api at ${this.options.url} is unreachable: ${errorMessage(err)}`)));
      req.end(body);
    });
  }

  /**
   * Send an HTTP Upgrade request (e.g. `Upgrade: SPDY/3.1`) to virt-api with this function's identity
   * and the caller's other headers, without interpreting the protocol. Resolves with the connection once
   * virt-api answered 101; rejects with BackendRefusedError carrying any other answer, or with
   * BackendUnavailableError when virt-api cannot be reached.
   */
  async upgrade(req: { method: string; path: string; headers: Record<string, string | string[]> }, user: RemoteUser): Promise<BackendUpgrade> {
    const target = new URL(this.options.url.replace(/\/$/, '') + req.path);
    const tls = await this.material();
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<BackendUpgrade>((resolve, reject) => {
      const out = send(target, {
        method: req.method,
        headers: { ...req.headers, ...this.headers(user) },
        timeout: this.options.timeoutMs,
        agent: false,
        ...tls,
      });
      out.on('upgrade', (response: IncomingMessage, socket: Socket, head: Buffer) => {
        socket.setTimeout(0);
        resolve({ response, socket, head });
      });
      out.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => reject(new BackendRefusedError(res.statusCode ?? 502, Buffer.concat(chunks).toString('utf8'), res.headers['content-type'])));
        res.on('error', () => reject(new BackendRefusedError(res.statusCode ?? 502, '', undefined)));
      });
      out.on('timeout', () => out.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)));
      out.on('error', (err) => reject(new BackendUnavailableError(`virt-api at ${this.options.url} is unreachable: ${errorMessage(err)}`)));
      out.end();
    });
  }

  /**
   * Open a WebSocket to virt-api. Resolves once it is open; rejects with BackendUnavailableError when
   * virt-api cannot be reached, or with BackendRefusedError carrying its HTTP answer.
   */
  async dial(path: string, protocol: string, user: RemoteUser): Promise<WebSocket> {
    const tls = await this.material();
    const url = this.options.url.replace(/^http/, 'ws').replace(/\/$/, '') + path;
    const ws = new WebSocket(url, [protocol], {
      ...tls,
      headers: this.headers(user) as Record<string, string>,
      handshakeTimeout: this.options.timeoutMs,
      maxPayload: 16 * 1024 * 1024,
    });
    return new Promise<WebSocket>((resolve, reject) => {
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => reject(new BackendRefusedError(res.statusCode ?? 502, Buffer.concat(chunks).toString('utf8'))));
        res.on('error', () => reject(new BackendRefusedError(res.statusCode ?? 502, '')));
      });
      ws.once('error', (err) => reject(new BackendUnavailableError(`virt-api at ${this.options.url} is unreachable: ${errorMessage(err)}`)));
    });
  }
}

/** virt-api took an HTTP Upgrade (any protocol but WebSocket): its 101 answer and the raw connection. */
export interface BackendUpgrade {
  readonly response: IncomingMessage;
  readonly socket: Socket;
  /** Bytes virt-api sent after its 101 that were read with it. */
  readonly head: Buffer;
}

/** virt-api answered the stream handshake with an HTTP error. */
export class BackendRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly contentType?: string,
  ) {
    super(`virt-api refused the stream: HTTP ${status}${body === '' ? '' : `: ${body.slice(0, 200)}`}`);
  }
}
