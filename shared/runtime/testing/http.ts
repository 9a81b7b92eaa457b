import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';

export interface TestRequest {
  readonly method?: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string | Buffer;
  /** Trusted CA (PEM) for https URLs. */
  readonly ca?: Buffer;
}

export interface TestResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The body parsed as JSON (throws when it is not). */
  json(): unknown;
}

/** One request on a fresh connection (no agent), the whole answer read. For tests and benchmarks. */
export function send(url: string, req: TestRequest = {}): Promise<TestResponse> {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: req.method ?? 'GET', headers: req.headers, ca: req.ca, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) as unknown });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/**
 * Write raw bytes on a TCP connection (optionally half-closing it) and collect everything the server
 * writes until it closes: for requests no HTTP client would send, such as a body cut short.
 */
export function rawExchange(port: number, bytes: string | Buffer, options: { halfClose?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(bytes);
      if (options.halfClose === true) socket.end();
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** The headers of a binary-mode CloudEvent, for building test requests. */
export function binaryHeaders(attributes: { id: string; type: string; source?: string }): Record<string, string> {
  return {
    'ce-id': attributes.id,
    'ce-type': attributes.type,
    'ce-source': attributes.source ?? '/tests',
    'ce-specversion': '1.0',
    'content-type': 'application/json',
  };
}

export interface UnfinishedAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Body bytes written before the answer's headers arrived. */
  readonly bytesSent: number;
  /** Body bytes the request promised (its Content-Length). */
  readonly bytesPromised: number;
}

/**
 * A POST that promises `promised` body bytes and sends them slowly (`chunk` bytes about every
 * millisecond, each once the socket drained), never finishing: resolves with the answer's status and headers and how
 * much of the body had been sent by then, and drops the connection. A server that waited for the
 * body before answering never resolves it; a test gives up through its own timeout.
 */
export function postUnfinished(
  url: string,
  o: { readonly headers?: OutgoingHttpHeaders; readonly promised: number; readonly chunk?: number },
): Promise<UnfinishedAnswer> {
  const piece = Buffer.alloc(o.chunk ?? 16 * 1024, 'x');
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const outgoing = httpRequest(url, { method: 'POST', agent: false, headers: { ...o.headers, 'content-length': String(o.promised) } }, (res) => {
      answered = true;
      res.resume();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, bytesSent: sent, bytesPromised: o.promised });
      outgoing.destroy();
    });
    outgoing.on('error', (err) => {
      if (!answered) reject(err);
    });
    // One piece at a time, the next once it drained, and always short of the promise by a piece.
    const more = (): void => {
      if (answered || outgoing.destroyed || sent + 2 * piece.length > o.promised) return;
      sent += piece.length;
      if (outgoing.write(piece)) setTimeout(more, 1);
      else outgoing.once('drain', () => setTimeout(more, 1));
    };
    outgoing.flushHeaders();
    more();
  });
}
