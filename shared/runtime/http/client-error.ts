import { STATUS_CODES } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { BadRequestError, type AppError } from '../../errors/index.js';
import { HeadersTooLargeError, RequestTimeoutError } from '../errors.js';
import { errorReply } from './errors.js';

/**
 * The server's `clientError` listener: requests Node's HTTP parser rejects before the host sees them
 * (a body cut short of its Content-Length, oversized headers, a slow sender) get the same JSON error
 * body as everything else, then the connection closes.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  const untouched = socket instanceof Socket && socket.bytesWritten === 0;
  if (!socket.writable || !untouched || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const reply = errorReply(classify(err));
  const body = reply.body ?? '';
  socket.end(
    `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? ''}\r\n` +
      `content-type: ${reply.headers['content-type'] ?? 'text/plain'}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body.toString()}`,
  );
}

function classify(err: Error & { code?: string }): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HeadersTooLargeError('request headers are too large', { cause: err });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeoutError('the request was not received in time', { cause: err });
    case 'HPE_INVALID_EOF_STATE':
      return new BadRequestError('the connection ended before the whole request arrived (body shorter than Content-Length?)', {
        cause: err,
      });
    default:
      return new BadRequestError(`malformed HTTP request: ${err.code ?? 'unknown'} ${err.message}`, { cause: err });
  }
}
