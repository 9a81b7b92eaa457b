import { describe, expect, it } from '@jest/globals';
import { ConflictError, KubeApiError, NotFoundError, TimeoutError, UnavailableError } from '../errors/index.js';
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

  it.each([
    [410, 'Expired'],
    [422, 'Invalid'],
    [403, 'Forbidden'],
    [500, 'InternalError'],
  ])('maps %d to KubeApiError carrying status and reason %s', (code, reason) => {
    const err = apiError('patch Widget ns/a', statusFromBody(code, status(code, reason, 'details')));
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ status: code, reason });
  });

  it('keeps the HTTP status when the body is not a Status', () => {
    const err = apiError('get Widget ns/a', statusFromBody(502, '<html>bad gateway</html>'));
    expect(err).toMatchObject({ status: 502, reason: undefined, message: 'get Widget ns/a: <html>bad gateway</html>' });
  });

  it('names the HTTP status when the body is empty', () => {
    expect(apiError('list Widget', statusFromBody(503, '')).message).toBe('list Widget: HTTP 503');
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
