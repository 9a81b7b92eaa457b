import { describe, expect, it } from '@jest/globals';
import { AlreadyExistsError, ConflictError, KubeApiError, NotFoundError, TimeoutError, UnavailableError, retryAfterMsOf } from '../errors/index.js';
import { apiError, isGone, statusFromBody, transportError } from './errors.js';

const status = (code: number, reason?: string, message?: string): string =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });

describe('apiserver error mapping', () => {
  it('maps 404 to NotFoundError whatever the message says', () => {
    const err = apiError('get Widget ns/a', statusFromBody(404, status(404, 'NotFound', 'conflict: looks like a 409')));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.message).toBe('get Widget ns/a: conflict: looks like a 409');
  });

  it('maps 409 to ConflictError whatever the message says', () => {
    const err = apiError('replace Widget ns/a', statusFromBody(409, status(409, 'Conflict', 'widgets "a" not found')));
    expect(err).toBeInstanceOf(ConflictError);
  });

  it('keeps the reason of a 409: AlreadyExists is its own class, Conflict is not AlreadyExists', () => {
    const exists = apiError('create Widget ns/a', statusFromBody(409, status(409, 'AlreadyExists', 'the object has been modified')));
    const stale = apiError('replace Widget ns/a', statusFromBody(409, status(409, 'Conflict', 'widgets "a" already exists')));
    expect(exists).toBeInstanceOf(AlreadyExistsError);
    expect(exists).toBeInstanceOf(ConflictError); // every 409 still reads as "someone wrote first"
    expect(exists).toMatchObject({ code: 'ALREADY_EXISTS', status: 409, reason: 'AlreadyExists' });
    expect(stale).not.toBeInstanceOf(AlreadyExistsError);
    expect(stale).toMatchObject({ code: 'CONFLICT', status: 409, reason: 'Conflict' });
  });

  it.each([
    [410, 'Expired'],
    [422, 'Invalid'],
    [403, 'Forbidden'],
    [429, 'TooManyRequests'],
  ])('maps %d to KubeApiError carrying status and reason %s', (code, reason) => {
    const err = apiError('patch Widget ns/a', statusFromBody(code, status(code, reason, 'details')));
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ status: code, reason });
  });

  it.each([
    [500, 'InternalError'],
    [503, 'ServiceUnavailable'],
    [504, 'Timeout'],
  ])('maps a %d from the apiserver to UnavailableError, keeping that status and the reason %s', (code, reason) => {
    const err = apiError('patch Widget ns/a', statusFromBody(code, status(code, reason, 'details')));
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ code: 'UNAVAILABLE', status: 503, upstreamStatus: code, reason });
  });

  it('keeps the HTTP status when the body is not a Status', () => {
    const err = apiError('get Widget ns/a', statusFromBody(502, '<html>bad gateway</html>'));
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ upstreamStatus: 502, reason: undefined, message: 'get Widget ns/a: <html>bad gateway</html>' });
  });

  it('names the HTTP status when the body is empty', () => {
    expect(apiError('list Widget', statusFromBody(503, '')).message).toBe('list Widget: HTTP 503');
  });

  it('keeps Retry-After from the header, else from the Status details, for a 429 and a 503', () => {
    const throttled = apiError('list Widget', statusFromBody(429, status(429, 'TooManyRequests'), '3'));
    expect(throttled).toMatchObject({ status: 429, retryAfterMs: 3000 });
    const body = JSON.stringify({ kind: 'Status', code: 503, reason: 'ServiceUnavailable', details: { retryAfterSeconds: 2 } });
    expect(retryAfterMsOf(apiError('list Widget', statusFromBody(503, body)))).toBe(2000);
    expect(retryAfterMsOf(apiError('list Widget', statusFromBody(429, '', 'Wed, 21 Oct 2015 07:28:00 GMT')))).toBeUndefined();
    expect(retryAfterMsOf(apiError('list Widget', statusFromBody(429, '', '86400')))).toBe(600_000); // capped
  });

  it('reads an already parsed Status object', () => {
    expect(statusFromBody(410, { code: 410, reason: 'Expired', message: 'too old resource version' })).toEqual({
      status: 410,
      reason: 'Expired',
      message: 'too old resource version',
    });
  });

  it('recognises 410 Gone by status only', () => {
    expect(isGone(new KubeApiError('x', 410, 'Expired'))).toBe(true);
    expect(isGone(new KubeApiError('410 Gone', 500, 'Gone'))).toBe(false);
    expect(isGone(new Error('410'))).toBe(false);
  });

  it('maps a connection failure to UnavailableError with the cause kept', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    const err = transportError('get Widget ns/a', cause, false);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.cause).toBe(cause);
  });

  it('maps a passed deadline to TimeoutError and leaves classified errors alone', () => {
    expect(transportError('list Widget', new Error('aborted'), true)).toBeInstanceOf(TimeoutError);
    const notFound = new NotFoundError('gone');
    expect(transportError('get', notFound, true)).toBe(notFound);
  });
});
