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
 * `connection: close`), then the body with its Content-Length (never chunked). The headers go to
 * `writeHead` as one flat list with the Content-Length in it: a `setHeader` before it would make node
 * copy every header into its own map first.
 */
export function sendReply(res: ServerResponse, reply: Reply): void {
  const { body, headers } = reply;
  const flat: Array<string | number> = [];
  let length = true;
  for (const name in headers) {
    flat.push(name, headers[name]);
    // A Content-Length the reply sets itself wins, as it did over `setHeader`.
    if (name.length === 14 && name.toLowerCase() === 'content-length') length = false;
  }
  if (body === undefined) {
    res.writeHead(reply.status, flat);
    res.end();
    return;
  }
  if (length) flat.push('content-length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.writeHead(reply.status, flat);
  res.end(body);
}
