/**
 * Listening on a configured address, with a failure that says which server, where and why: a port
 * another process holds is "the metrics server cannot listen on 10.0.0.5:8080: address already in
 * use", not node's bare `listen EADDRINUSE`, so whoever reads the result sees what to change. The one
 * way every server of the product (daemons, the function host, the CLI's local listeners) binds.
 */
import type { AddressInfo, Server } from 'node:net';
import { AppError, errorMessage } from '../errors/index.js';

/** The usual causes, by node's error code; anything else keeps node's own message. */
const CAUSES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'address not available on this host',
  EACCES: 'permission denied',
};

/** A server could not bind its address; `cause` is node's error. */
export class ListenError extends AppError {
  readonly code = 'LISTEN_FAILED';
  readonly status = 500;
  /** Undefined: every interface. */
  readonly host: string | undefined;
  readonly port: number;

  constructor(what: string, host: string | undefined, port: number, cause: unknown) {
    super(`${what} cannot listen on ${host === undefined ? `port ${port}` : hostPort(host, port)}: ${causeText(cause)}`, { cause });
    this.host = host;
    this.port = port;
  }
}

/** `host:port`, an IPv6 host in brackets. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function causeText(err: unknown): string {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return (typeof code === 'string' ? CAUSES[code] : undefined) ?? errorMessage(err);
}

/**
 * Listen on `host:port` (port 0: a free one; no host: every interface, IPv4 and IPv6) and resolve
 * with the bound port; a failure to bind rejects with a ListenError naming `what` (e.g. 'the metrics
 * server'), the address and the cause.
 */
export function listen(server: Server, host: string | undefined, port: number, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error): void => reject(new ListenError(what, host, port, err));
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
