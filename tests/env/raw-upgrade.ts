/**
 * An HTTP/1.1 Upgrade request on a raw TLS connection to an apiserver with its admin client
 * certificate, as kubectl's SPDY and WebSocket round trippers send one (`Connection: Upgrade`, the
 * caller's `Upgrade` and other header lines). What comes back: the status line and headers, then
 * either the body of a refusal (read to the end) or the open socket with everything received after
 * the 101.
 */
import { readFile } from 'node:fs/promises';
import { connect, type TLSSocket } from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '../../shared/testing/wait.js';

export interface RawUpgrade {
  readonly status: number;
  readonly head: string;
  readonly body: string;
  readonly socket: TLSSocket;
  /** Everything received after the answer's head. */
  received(): Buffer;
  /** Waits until `text` has been received after the head. */
  until(what: string, text: string): Promise<void>;
}

export interface UpgradeTarget {
  readonly server: string;
  kubeConfig(): KubeConfig;
}

export async function rawUpgrade(apiserver: UpgradeTarget, method: string, path: string, headerLines: readonly string[]): Promise<RawUpgrade> {
  const kc = apiserver.kubeConfig();
  const user = kc.getCurrentUser();
  const caFile = kc.getCurrentCluster()?.caFile;
  if (user?.certFile === undefined || user.keyFile === undefined || caFile === undefined) {
    throw new Error(`the kubeconfig of ${apiserver.server} names no client certificate files or CA file`);
  }
  const server = new URL(apiserver.server);
  const socket = connect({
    host: server.hostname,
    port: Number(server.port),
    ca: await readFile(caFile, 'utf8'),
    cert: await readFile(user.certFile, 'utf8'),
    key: await readFile(user.keyFile, 'utf8'),
    ALPNProtocols: ['http/1.1'],
  });
  let all = Buffer.alloc(0);
  socket.on('data', (b: Buffer) => (all = Buffer.concat([all, b])));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  socket.write([`${method} ${path} HTTP/1.1`, `Host: ${server.host}`, 'Connection: Upgrade', 'Content-Length: 0', ...headerLines, '', ''].join('\r\n'));
  const headEnd = await waitFor('the answer to the upgrade', () => {
    const at = all.indexOf('\r\n\r\n');
    return Promise.resolve(at < 0 ? undefined : at);
  });
  const head = all.subarray(0, headEnd).toString('latin1');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const received = (): Buffer => all.subarray(headEnd + 4);
  let body = '';
  if (status !== 101) {
    // The apiserver keeps the connection alive after a refusal: the body ends at its Content-Length.
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
    if (length === undefined) await ended;
    else await waitFor('the body of the refusal', () => Promise.resolve(received().length >= Number(length) ? true : undefined));
    body = received().toString('utf8');
    socket.destroy();
  }
  const until = async (what: string, text: string): Promise<void> => {
    await waitFor(what, () => Promise.resolve(received().toString('utf8').includes(text) ? true : undefined), { timeoutMs: 15_000 });
  };
  return { status, head, body, socket, received, until };
}
