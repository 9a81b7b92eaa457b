import type { Response } from 'express';

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

export function sendReply(res: Response, reply: Reply): void {
  res.status(reply.status);
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  if (reply.body === undefined) res.end();
  else res.end(reply.body);
}
