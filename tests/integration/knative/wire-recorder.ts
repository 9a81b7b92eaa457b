/**
 * A user container that tells what reached it (run by tests/integration/knative/subresources-queue-proxy.test.ts
 * behind Knative's queue-proxy, `node --import tsx` this file): on 127.0.0.1:$PORT it speaks HTTP/1.1
 * and h2c with prior knowledge on the same port (a connection opening with the HTTP/2 preface goes to
 * an HTTP/2 server, any other to an HTTP/1 one), and answers every request with what it saw (protocol
 * version, method, path, headers) as JSON; an upgrade request gets a 101 naming the same protocol,
 * that record as one line, and then every byte it receives echoed back.
 */
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createNetServer, type Socket } from 'node:net';
import { duplexPair, type Duplex } from 'node:stream';

export const GROUP_VERSION = 'subresources.virtualization.deckhouse.io/v1alpha2';
const H2_PREFACE = 'PRI * HTTP/2.0\r\n';

/** What the recorder answers: the request as it arrived at the user container. */
export interface WireRecord {
  readonly kind: 'WireRecord';
  readonly httpVersion: string;
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

const record = (req: IncomingMessage | Http2ServerRequest): WireRecord => ({
  kind: 'WireRecord',
  httpVersion: req.httpVersion,
  method: req.method ?? '',
  path: req.url ?? '',
  headers: req.headers,
});

function answer(req: IncomingMessage | Http2ServerRequest, res: Pick<ServerResponse | Http2ServerResponse, 'setHeader' | 'end'>): void {
  req.resume();
  const body =
    req.url === '/health/readiness'
      ? { ok: true }
      : req.url === `/apis/${GROUP_VERSION}`
        ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GROUP_VERSION, resources: [] }
        : record(req);
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
  socket.on('error', () => socket.destroy());
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade ?? ''}\r\n\r\n`);
  socket.write(`${JSON.stringify(record(req))}\n`);
  if (head.length > 0) socket.write(head);
  socket.pipe(socket);
}

export function startWireRecorder(port: number, host: string): void {
  const h1 = createHttpServer(answer);
  h1.on('upgrade', upgrade);
  const h2 = createHttp2Server(answer);
  // Node's plain-text HTTP/2 server speaks HTTP/2 only (`allowHTTP1` works with TLS, by ALPN), so the
  // first bytes decide. HTTP/2 reads its socket's handle directly and would miss bytes handed back
  // with unshift; it gets a stream pair fed from the socket instead.
  const server = createNetServer((socket: Socket) => {
    socket.on('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      socket.pause();
      if (first.toString('latin1').startsWith(H2_PREFACE)) {
        const [inner, outer] = duplexPair();
        outer.write(first);
        socket.pipe(outer).pipe(socket);
        h2.emit('connection', inner);
      } else {
        socket.unshift(first);
        h1.emit('connection', socket);
      }
      socket.resume();
    });
  });
  server.listen(port, host);
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  startWireRecorder(Number(process.env['PORT'] ?? 8080), process.env['HOST'] ?? '127.0.0.1');
}
