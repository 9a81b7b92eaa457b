import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { LookupCache } from '../cache/lookup-cache.js';
import { UnavailableError } from '../errors/index.js';
import { AccessGuard, bearerToken, denialReply, tokenKey, type AccessDecision, type VerdictCache } from './guard.js';
import { METRICS_ATTRIBUTES } from './metrics.js';
import type { AccessAttributes, UserInfo } from './reviews.js';
import type { AccessVerdict, Reviewer } from './reviewer.js';

/** A reviewer from two tables (token → user, users allowed) that records every call. */
class FakeReviewer implements Reviewer {
  readonly calls: string[] = [];
  down = false;

  constructor(
    private readonly users: Record<string, string>,
    private readonly allowed: ReadonlySet<string>,
  ) {}

  authenticate(token: string): Promise<UserInfo | undefined> {
    this.calls.push(`authenticate ${token}`);
    if (this.down) return Promise.reject(new UnavailableError('create TokenReview: connect ECONNREFUSED'));
    const username = this.users[token];
    return Promise.resolve(username === undefined ? undefined : { username, groups: ['system:authenticated'] });
  }

  authorize(user: UserInfo, attributes: AccessAttributes): Promise<AccessVerdict> {
    this.calls.push(`authorize ${user.username ?? ''} ${JSON.stringify(attributes)}`);
    if (this.down) return Promise.reject(new UnavailableError('create SubjectAccessReview: HTTP 500'));
    const allowed = this.allowed.has(user.username ?? '');
    return Promise.resolve({ allowed, reason: allowed ? undefined : 'no RBAC policy matched' });
  }
}

interface Setup {
  guard: AccessGuard;
  reviewer: FakeReviewer;
  keys: string[];
  logs: Array<{ level: string; msg: string }>;
  clock: { now: number };
}

function setup(opts: { maxEntries?: number } = {}): Setup {
  const reviewer = new FakeReviewer({ 'good-token': 'scraper', 'other-token': 'stranger' }, new Set(['scraper']));
  const clock = { now: 0 };
  const keys: string[] = [];
  const cache = new LookupCache({ ttlMs: 10_000, staleMs: 0, maxEntries: opts.maxEntries ?? 100, now: () => clock.now });
  const recording: VerdictCache = {
    get: (key, load, ttlOf) => {
      keys.push(key);
      return cache.get(key, load, ttlOf);
    },
    clear: () => cache.clear(),
    get size() {
      return cache.size;
    },
  };
  const logs: Setup['logs'] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(JSON.parse(chunk.toString()) as { level: string; msg: string });
      done();
    },
  });
  const log = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, sink);
  const guard = new AccessGuard({ reviewer, attributes: METRICS_ATTRIBUTES, log, cache: recording, allowedTtlMs: 10_000, deniedTtlMs: 5_000 });
  return { guard, reviewer, keys, logs, clock };
}

const statusOf = (d: AccessDecision): number => (d.allowed ? 200 : d.status);

describe('bearerToken', () => {
  it.each([
    ['Bearer abc.DEF-_~+/=', 'abc.DEF-_~+/='],
    ['bearer  eyJhbGciOi.x.y ', 'eyJhbGciOi.x.y'],
    [undefined, undefined],
    ['', undefined],
    ['Bearer', undefined],
    ['Bearer ', undefined],
    ['Basic dXNlcjpwYXNz', undefined],
    ['Bearer two tokens', undefined],
    ['Bearer tok"en', undefined],
  ])('reads %j as %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe('AccessGuard', () => {
  it('answers 401 without asking the apiserver when the token is missing or malformed', async () => {
    const { guard, reviewer } = setup();
    const decisions = await Promise.all([undefined, 'Basic dXNlcjpwYXNz', 'Bearer a b'].map((h) => guard.check(h)));
    expect(decisions.map(statusOf)).toEqual([401, 401, 401]);
    expect(reviewer.calls).toEqual([]);
  });

  it('answers 401 for a token the apiserver rejects, 403 for a user without the right, and allows one with it', async () => {
    const { guard, reviewer } = setup();
    expect(await guard.check('Bearer garbage')).toMatchObject({ allowed: false, status: 401, code: 'UNAUTHORIZED' });
    expect(await guard.check('Bearer other-token')).toEqual({
      allowed: false,
      status: 403,
      code: 'FORBIDDEN',
      message: 'stranger may not get /metrics (no RBAC policy matched)',
    });
    expect(await guard.check('Bearer good-token')).toEqual({ allowed: true, user: 'scraper' });
    expect(reviewer.calls).toEqual([
      'authenticate garbage',
      'authenticate other-token',
      'authorize stranger {"nonResourceAttributes":{"path":"/metrics","verb":"get"}}',
      'authenticate good-token',
      'authorize scraper {"nonResourceAttributes":{"path":"/metrics","verb":"get"}}',
    ]);
  });

  it('does not ask the apiserver again for a token it has a fresh verdict on', async () => {
    const { guard, reviewer, clock } = setup();
    await guard.check('Bearer good-token');
    await guard.check('Bearer other-token');
    clock.now = 4_999;
    expect((await Promise.all([guard.check('Bearer good-token'), guard.check('Bearer other-token')])).map(statusOf)).toEqual([200, 403]);
    expect(reviewer.calls).toHaveLength(4);
  });

  it('asks again once a verdict has expired: a denial after 5 s, an approval after 10 s', async () => {
    const { guard, reviewer, clock } = setup();
    await guard.check('Bearer good-token');
    await guard.check('Bearer other-token');
    clock.now = 5_001;
    await guard.check('Bearer good-token');
    await guard.check('Bearer other-token');
    expect(reviewer.calls.filter((c) => c.startsWith('authenticate'))).toEqual([
      'authenticate good-token',
      'authenticate other-token',
      'authenticate other-token',
    ]);
    clock.now = 10_001;
    await guard.check('Bearer good-token');
    expect(reviewer.calls.filter((c) => c.startsWith('authenticate'))).toHaveLength(4);
  });

  it('shares one review between concurrent requests with the same token', async () => {
    const { guard, reviewer } = setup();
    const decisions = await Promise.all(Array.from({ length: 5 }, () => guard.check('Bearer good-token')));
    expect(decisions.map(statusOf)).toEqual([200, 200, 200, 200, 200]);
    expect(reviewer.calls).toHaveLength(2);
  });

  it('keys verdicts by the SHA-256 of the token, never the token itself', async () => {
    const { guard, keys } = setup();
    await guard.check('Bearer good-token');
    await guard.check('Bearer garbage');
    const sha = (t: string): string => createHash('sha256').update(t).digest('hex');
    expect(keys).toEqual([sha('good-token'), sha('garbage')]);
    expect(keys.every((k) => !k.includes('good-token') && !k.includes('garbage'))).toBe(true);
    expect(tokenKey('good-token')).toBe(sha('good-token'));
  });

  it('answers 503 while the apiserver fails, never keeps the failure, and never serves an expired approval', async () => {
    const { guard, reviewer, clock, logs } = setup();
    expect(statusOf(await guard.check('Bearer good-token'))).toBe(200);
    reviewer.down = true;
    clock.now = 10_001;
    const down = await guard.check('Bearer good-token');
    expect(down).toMatchObject({ allowed: false, status: 503, code: 'UNAVAILABLE' });
    expect(statusOf(await guard.check('Bearer good-token'))).toBe(503);
    expect(statusOf(await guard.check('Bearer other-token'))).toBe(503);
    expect(reviewer.calls.filter((c) => c.startsWith('authenticate'))).toHaveLength(4);
    reviewer.down = false;
    expect(statusOf(await guard.check('Bearer good-token'))).toBe(200);
    // One warning for the whole outage, one line when it ends; the token is in no log line.
    expect(logs.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(logs.filter((l) => l.level === 'info').map((l) => l.msg)).toEqual(['reviews with the Kubernetes API work again']);
    expect(JSON.stringify(logs)).not.toContain('good-token');
  });

  it('remembers at most maxEntries tokens', async () => {
    const { guard } = setup({ maxEntries: 2 });
    for (const t of ['a', 'b', 'c', 'good-token']) await guard.check(`Bearer ${t}`);
    expect(guard.cached).toBe(2);
  });
});

describe('denialReply', () => {
  it('answers JSON errors, with a Bearer challenge on 401 and Retry-After on 503', () => {
    const unauthorized = denialReply({ allowed: false, status: 401, code: 'UNAUTHORIZED', message: 'no' });
    const unavailable = denialReply({ allowed: false, status: 503, code: 'UNAVAILABLE', message: 'later' });
    expect(unauthorized.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(JSON.parse(unauthorized.body)).toEqual({ error: { code: 'UNAUTHORIZED', message: 'no' } });
    expect([unavailable.status, unavailable.headers['retry-after'], unavailable.headers['www-authenticate']]).toEqual([503, '5', undefined]);
  });
});
