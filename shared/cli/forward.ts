/**
 * Local TCP listeners whose connections each become one WebSocket stream to the VM: `port-forward`
 * (one listener per LOCAL:REMOTE pair) and `vnc` (one listener for a VNC viewer). `--stdio` carries
 * one stream on stdin/stdout instead (what ssh's ProxyCommand needs). TCP only.
 */
import { once } from 'node:events';
import net from 'node:net';
import { errorMessage } from '../errors/index.js';
import { hostPort, listen } from '../http/listen.js';
import type { Connection } from './connection.js';
import { UsageError } from './exit-codes.js';
import type { Io } from './io.js';
import { openStream, splice, type StreamTarget } from './stream.js';
import { getVirtualMachine } from './vm.js';

export interface PortMapping {
  /** 0: any free port (printed). */
  local: number;
  remote: number;
}

/** `8080:80`, `80` (the same port locally) or `:80` (any free local port). */
export function parsePortMapping(text: string): PortMapping {
  const match = /^(?:(\d*):)?(\d+)$/.exec(text);
  const remote = Number(match?.[2]);
  const local = match?.[1] === undefined ? remote : match[1] === '' ? 0 : Number(match[1]);
  if (!match || !validPort(remote) || !(local === 0 || validPort(local))) {
    throw new UsageError(`"${text}" is not a port mapping: expected REMOTE, LOCAL:REMOTE or :REMOTE with ports 1-65535`);
  }
  return { local, remote };
}

export function validPort(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= 65535;
}

export interface Listener {
  target: StreamTarget;
  local: number;
  /** What the listener leads to, for the printed line: `VM:22`, `VNC of VM`. */
  label: string;
}

/**
 * Listen on every listener's local port until `signal` aborts (then resolves). Each accepted
 * connection opens its own stream; a stream that fails is reported and closes that connection only.
 * The bound address of each listener is printed on stdout (`Forwarding from 127.0.0.1:PORT -> ...`);
 * a local port that cannot be bound rejects with a ListenError (a usage error: exit-codes.ts).
 */
export async function serveListeners(conn: Connection, listeners: readonly Listener[], address: string, io: Io, signal: AbortSignal): Promise<void> {
  const vm = listeners[0]?.target.vm ?? '';
  await getVirtualMachine(conn, vm, signal);
  const servers: net.Server[] = [];
  try {
    for (const l of listeners) {
      const server = net.createServer((socket) => void forwardOne(conn, l, socket, io, signal));
      servers.push(server);
      const port = await listen(server, address, l.local, `the forward to ${l.label}`);
      io.stdout.write(`Forwarding from ${hostPort(address, port)} -> ${l.label}\n`);
    }
    io.stderr.write('Press Ctrl-C to stop.\n');
    if (!signal.aborted) await once(signal, 'abort');
  } finally {
    for (const server of servers) server.close();
  }
}

async function forwardOne(conn: Connection, l: Listener, socket: net.Socket, io: Io, signal: AbortSignal): Promise<void> {
  socket.on('error', () => undefined); // a reset by the local client ends that connection only
  try {
    const ws = await openStream(conn, l.target, signal);
    socket.once('close', () => ws.close(1000));
    await splice(ws, socket, socket, `${l.label}`);
  } catch (err: unknown) {
    if (!signal.aborted) io.stderr.write(`${l.label}: ${errorMessage(err)}\n`);
  } finally {
    socket.end();
  }
}

/** One stream on stdin/stdout (ssh's ProxyCommand); resolves when either side ends. */
export async function forwardStdio(conn: Connection, target: StreamTarget, io: Io, signal: AbortSignal): Promise<void> {
  const ws = await openStream(conn, target, signal);
  const onAbort = (): void => ws.close(1000);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await splice(ws, io.stdin, io.stdout, `port ${target.query?.['port']} of VirtualMachine ${conn.namespace}/${target.vm}`);
  } finally {
    signal.removeEventListener('abort', onAbort);
    io.stdin.pause();
  }
}
