import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { parseConfig } from '../config/index.js';
import { Registry } from '../metrics/index.js';
import { z } from 'zod';
import { AccessGuard } from './guard.js';
import type { AccessAttributes, UserInfo } from './reviews.js';
import type { AccessVerdict, Reviewer } from './reviewer.js';
import { AUDIT_SENDER, SenderGuard, senderAuthConfigShape } from './senders.js';

/** Tokens → users; only `vector` may create auditevents. Records what was asked. */
class Reviews implements Reviewer {
  readonly asked: string[] = [];
  authenticate(token: string): Promise<UserInfo | undefined> {
    const user = { 'vector-token': 'system:serviceaccount:d8-log-shipper:log-shipper', 'other-token': 'system:serviceaccount:x:nobody' }[token];
    return Promise.resolve(user === undefined ? undefined : { username: user });
  }
  authorize(user: UserInfo, attributes: AccessAttributes): Promise<AccessVerdict> {
    this.asked.push(`${user.username ?? ''} ${JSON.stringify(attributes)}`);
    return Promise.resolve({ allowed: user.username === 'system:serviceaccount:d8-log-shipper:log-shipper', reason: undefined });
  }
}

function setup(): { guard: SenderGuard; metrics: Registry; reviews: Reviews; lines: Array<{ level: number; msg: string; source?: string }> } {
  const lines: Array<{ level: number; msg: string; source?: string }> = [];
  const log = pino(
    { level: 'debug' },
    new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]), done()) }),
  );
  const reviews = new Reviews();
  const metrics = new Registry();
  const access = new AccessGuard({ reviewer: reviews, attributes: { resourceAttributes: AUDIT_SENDER }, log });
  return { guard: new SenderGuard({ guard: access, what: 'send audit events', metrics, log }), metrics, reviews, lines };
}

const request = (authorization?: string, source = '10.0.0.7'): { headers: Record<string, string>; remoteAddress: string } => ({
  headers: authorization === undefined ? {} : { authorization },
  remoteAddress: source,
});

describe('the sender check of audit and pre-delete', () => {
  it('answers 401 without a credential, 403 for a user without create auditevents, and names an allowed sender', async () => {
    const { guard, reviews } = setup();
    const none = await guard.verdict(request());
    const garbage = await guard.verdict(request('Bearer nonsense'));
    const stranger = await guard.verdict(request('Bearer other-token'));
    const vector = await guard.verdict(request('Bearer vector-token'));
    expect([none, garbage, stranger].map((v) => ('refused' in v ? v.refused.status : 0))).toEqual([401, 401, 403]);
    expect(stranger).toMatchObject({ refused: { body: expect.stringContaining('may not create auditevents.virtualization.deckhouse.io') } });
    expect(vector).toEqual({ sender: 'system:serviceaccount:d8-log-shipper:log-shipper' });
    expect(reviews.asked[0]).toContain('"resource":"auditevents"');
  });

  it('counts every result in sender_checks_total', async () => {
    const { guard, metrics } = setup();
    await guard.check(request());
    await guard.check(request());
    await guard.check(request('Bearer other-token'));
    await guard.check(request('Bearer vector-token'));
    const text = await metrics.expose();
    expect(text).toContain('sender_checks_total{result="unauthenticated"} 2');
    expect(text).toContain('sender_checks_total{result="forbidden"} 1');
    expect(text).toContain('sender_checks_total{result="allowed"} 1');
  });

  it('logs a refusal once per source and result (a flood from one source is one warning), by the forwarded address when there is one', async () => {
    const { guard, lines } = setup();
    for (let i = 0; i < 50; i += 1) await guard.check(request());
    await guard.check({ headers: { 'x-forwarded-for': '10.9.9.9, 10.0.0.1' }, remoteAddress: '127.0.0.1' });
    await guard.check(request('Bearer other-token'));
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.map((w) => w.source)).toEqual(['10.0.0.7', '10.9.9.9', '10.0.0.7']);
  });

  it('reads SENDER_AUTH and SENDER_AUDIENCES, refusing anything but kubernetes or none', () => {
    const schema = z.object(senderAuthConfigShape);
    expect(parseConfig(schema, {})).toEqual({ SENDER_AUTH: 'kubernetes', SENDER_AUDIENCES: undefined });
    expect(parseConfig(schema, { SENDER_AUDIENCES: 'a, b,' })).toMatchObject({ SENDER_AUDIENCES: ['a', 'b'] });
    expect(() => parseConfig(schema, { SENDER_AUTH: 'off' })).toThrow('SENDER_AUTH');
  });
});
