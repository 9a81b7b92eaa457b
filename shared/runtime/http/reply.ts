import type { ServerResponse } from 'node:http';

/** A complete HTTP answer, built by pure code and written by `sendReply`. */
export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer | undefined;
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function jsonReply(status: number, value: unknown): Reply {
  return { status, headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(value) };
}

/**
 * Status and headers in one `writeHead` (merged with any set before, such as the drain's
 * `connection: close`), then the body with its Content-Length (never chunked).
 */
export function sendReply(res: ServerResponse, reply: Reply): void {
  const { body } = reply;
  if (body === undefined) {
    res.writeHead(reply.status, reply.headers);
    res.end();
    return;
  }
  res.setHeader('content-length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.writeHead(reply.status, reply.headers);
  res.end(body);
}
