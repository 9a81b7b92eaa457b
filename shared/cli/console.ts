/**
 * `d8v console VM`: the VM's serial console on this terminal. The terminal is put in raw mode (every
 * key, Ctrl-C included, goes to the guest); Ctrl+] leaves, as with virtctl.
 */
import { PassThrough } from 'node:stream';
import type { ReadStream } from 'node:tty';
import type { Connection } from './connection.js';
import type { Io } from './io.js';
import { openStream, splice } from './stream.js';
import { getVirtualMachine } from './vm.js';

/** Ctrl+] (GS): the key that ends the session. */
export const ESCAPE_BYTE = 0x1d;

export async function runConsole(conn: Connection, vm: string, io: Io, signal: AbortSignal): Promise<void> {
  await getVirtualMachine(conn, vm, signal);
  const ws = await openStream(conn, { vm, kind: 'console' }, signal);
  const what = `console of VirtualMachine ${conn.namespace}/${vm}`;
  io.stderr.write(`Connected to the ${what}. Press Ctrl+] to leave.\r\n`);
  const tty = io.stdin as Partial<ReadStream>;
  const raw = tty.isTTY === true && typeof tty.setRawMode === 'function';
  if (raw) tty.setRawMode?.(true);
  const input = untilEscape(io.stdin);
  const onAbort = (): void => ws.close(1000);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await splice(ws, input, io.stdout, what);
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (raw) tty.setRawMode?.(false);
    io.stdin.pause();
    io.stderr.write(`\r\nLeft the ${what}.\r\n`);
  }
}

/** The input up to (not including) the escape byte; ends there, or when the input itself ends. */
export function untilEscape(source: NodeJS.ReadableStream): PassThrough {
  const out = new PassThrough();
  const onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const at = bytes.indexOf(ESCAPE_BYTE);
    if (at < 0) {
      out.write(bytes);
      return;
    }
    if (at > 0) out.write(bytes.subarray(0, at));
    stop();
  };
  const stop = (): void => {
    source.off('data', onData);
    source.off('end', stop);
    out.end();
  };
  source.on('data', onData);
  source.once('end', stop);
  return out;
}
