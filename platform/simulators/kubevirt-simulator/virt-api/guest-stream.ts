/**
 * A stream of a real guest (`qemu/`): the bytes of a console or VNC session go to and from the
 * guest's own unix socket (QEMU's serial chardev, its RFB server), as virt-api relays virt-handler's.
 * When the socket cannot be reached or closes, the session is closed with the reason.
 */
import { createConnection } from 'node:net';

/** Where the stand-in finds a VM's real guest; undefined sockets: the VM has none here (the imitation serves). */
export interface GuestSockets {
  /** `serial` (the console) or `vnc` socket of VM `<namespace>/<name>`, or undefined when it runs no real guest. */
  socketOf(namespace: string, name: string, kind: 'serial' | 'vnc'): string | undefined;
  /**
   * Freeze (thawed again by itself after `unfreezeMs`) or thaw the VM's guest filesystems through its
   * guest agent; `no-guest` when it runs no real guest here. Rejects naming why the agent did not.
   */
  fsFreeze?(namespace: string, name: string, action: 'freeze' | 'thaw', unfreezeMs?: number): Promise<'done' | 'no-guest'>;
}

export interface GuestStream {
  receive(bytes: Buffer): void;
  end(): void;
}

/** Relay between a session (`send`, `close`) and the guest socket at `path`. */
export function guestStream(path: string, send: (bytes: Buffer) => void, close: (reason: string) => void): GuestStream {
  const socket = createConnection(path);
  let closed = false;
  const finish = (reason: string): void => {
    if (closed) return;
    closed = true;
    close(reason);
  };
  socket.on('data', (b: Buffer) => send(b));
  socket.on('error', (err) => finish(`the guest's socket failed: ${err.message}`));
  socket.on('close', () => finish("the guest's socket closed"));
  return {
    receive: (bytes) => {
      if (!socket.destroyed) socket.write(bytes);
    },
    end: () => {
      closed = true;
      socket.destroy();
    },
  };
}
