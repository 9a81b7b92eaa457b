/**
 * A stream of a real guest (`qemu/`): the bytes of a console or VNC session go to and from the
 * guest's own unix socket (QEMU's serial chardev, its RFB server), as virt-api relays virt-handler's.
 * When the socket cannot be reached or closes, the session is closed with the reason.
 */
import { createConnection, type Socket } from 'node:net';

/** Where the stand-in finds a VM's real guest; undefined sockets: the VM has none here (the imitation serves). */
export interface GuestSockets {
  /** `serial` (the console) or `vnc` socket of VM `<namespace>/<name>`, or undefined when it runs no real guest. */
  socketOf(namespace: string, name: string, kind: 'serial' | 'vnc'): string | undefined;
  /**
   * Freeze (thawed again by itself after `unfreezeMs`) or thaw the VM's guest filesystems through its
   * guest agent; `no-guest` when it runs no real guest here. Rejects naming why the agent did not.
   */
  fsFreeze?(namespace: string, name: string, action: 'freeze' | 'thaw', unfreezeMs?: number): Promise<'done' | 'no-guest'>;
  /** The loopback port that reaches TCP port `port` of the VM's guest, or undefined when it runs no real guest here. */
  forwardPort?(namespace: string, name: string, port: number): Promise<number> | undefined;
}

export interface GuestStream {
  receive(bytes: Buffer): void;
  end(): void;
}

/**
 * Relay between a session (`send`, `close`) and the guest: its unix socket at `target` (console, VNC),
 * or the loopback TCP port `target` resolves to (a port forwarded into the guest); bytes that come
 * before the connection is made wait for it.
 */
export function guestStream(target: string | Promise<number>, send: (bytes: Buffer) => void, close: (reason: string) => void): GuestStream {
  let socket: Socket | undefined;
  const waiting: Buffer[] = [];
  let closed = false;
  const finish = (reason: string): void => {
    if (closed) return;
    closed = true;
    close(reason);
  };
  const attach = (s: Socket): void => {
    socket = s;
    s.on('data', (b: Buffer) => send(b));
    s.on('error', (err) => finish(`the guest's socket failed: ${err.message}`));
    s.on('close', () => finish("the guest's socket closed"));
    for (const b of waiting.splice(0)) s.write(b);
  };
  if (typeof target === 'string') attach(createConnection(target));
  else
    target.then(
      (port) => (closed ? undefined : attach(createConnection({ host: '127.0.0.1', port }))),
      (err: unknown) => finish(`port-forward into the guest failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  return {
    receive: (bytes) => {
      if (socket === undefined) waiting.push(bytes);
      else if (!socket.destroyed) socket.write(bytes);
    },
    end: () => {
      closed = true;
      socket?.destroy();
    },
  };
}
