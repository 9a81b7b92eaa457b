/**
 * Reading one decoded message from a stream socket: collect bytes until the decoder says `ok` or
 * `bad`, with a deadline, and give back any bytes past the message (`socket.unshift`) so the next
 * reader (the kernel, or the next phase) sees them. The socket is left paused.
 */
import type { Socket } from 'node:net';
import { type Decoded, UsbipProtocolError } from './protocol.js';

export interface ReadOptions {
  /** Give up (UsbipProtocolError 'truncated') after this long. */
  readonly timeoutMs: number;
  /** Name of the awaited message, for errors. */
  readonly what: string;
}

/** Resolves with the decoded value; rejects with UsbipProtocolError (bad bytes, timeout, peer closed). */
export function readMessage<T>(socket: Socket, decode: (buf: Buffer) => Decoded<T>, opts: ReadOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let buffered: Buffer = Buffer.alloc(0);
    const finish = (err: Error | undefined, value?: T, rest?: Buffer): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onError);
      socket.pause();
      if (rest !== undefined && rest.length > 0) socket.unshift(rest);
      if (err !== undefined) reject(err);
      else resolve(value as T);
    };
    const onData = (chunk: Buffer): void => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const result = decode(buffered);
      if (result.kind === 'ok') finish(undefined, result.value, buffered.subarray(result.length));
      else if (result.kind === 'bad') finish(result.error);
    };
    const onEnd = (): void => {
      finish(new UsbipProtocolError('truncated', `peer closed after ${buffered.length} bytes of ${opts.what}`));
    };
    const onError = (err: Error): void => {
      finish(new UsbipProtocolError('truncated', `connection failed while reading ${opts.what}: ${err.message}`, { cause: err }));
    };
    const timer = setTimeout(() => {
      finish(new UsbipProtocolError('truncated', `no complete ${opts.what} within ${opts.timeoutMs} ms (${buffered.length} bytes received)`));
    }, opts.timeoutMs);
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    socket.once('error', onError);
    if (socket.readableEnded || socket.destroyed) onEnd();
    else socket.resume();
  });
}

/** Write and wait until the bytes are handed to the kernel's socket buffer. */
export function writeAll(socket: Socket, bytes: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.write(bytes, (err) => (err ? reject(err) : resolve()));
  });
}
