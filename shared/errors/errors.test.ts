import { describe, expect, it } from '@jest/globals';
import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  ProtocolError,
  UnavailableError,
  ValidationError,
  errorMessage,
  httpStatusOf,
  retryAfterMsOf,
} from './index.js';

describe('errors', () => {
  it('carry a stable code, an HTTP status and the cause', () => {
    const cause = new Error('socket hang up');
    const err = new ConflictError('object changed', { cause });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('ConflictError');
    expect([err.code, err.status, err.cause]).toEqual(['CONFLICT', 409, cause]);
  });

  it('list every field problem of a validation error in its message', () => {
    const err = new ValidationError('VirtualMachine rejected', [
      { path: 'spec.cpu.cores', message: 'must be positive' },
      { path: 'spec.runPolicy', message: 'unknown value' },
    ]);
    expect(err.message).toBe('VirtualMachine rejected: spec.cpu.cores: must be positive; spec.runPolicy: unknown value');
    expect(err.toJSON()).toEqual({ code: 'VALIDATION_FAILED', message: err.message, status: 400 });
  });

  it('map unknown throwables to status 500 and a printable message', () => {
    expect(httpStatusOf(new BadRequestError('x'))).toBe(400);
    expect(httpStatusOf(new Error('x'))).toBe(500);
    expect(errorMessage({ weird: true })).toBe('[object Object]');
    expect(errorMessage('plain')).toBe('plain');
  });

  it('tell a create that found the name taken from a stale write, both being 409 conflicts', () => {
    const exists = new AlreadyExistsError('create Widget ns/a: already exists');
    expect(exists).toBeInstanceOf(ConflictError);
    expect([exists.name, exists.code, exists.status, exists.reason]).toEqual(['AlreadyExistsError', 'ALREADY_EXISTS', 409, 'AlreadyExists']);
    expect(new ConflictError('stale').reason).toBe('Conflict');
  });

  it('keep what an upstream answered on UnavailableError, and answer 502 for a broken protocol', () => {
    const down = new UnavailableError('list Widget: etcd down', { upstreamStatus: 500, reason: 'InternalError', retryAfterMs: 1000 });
    expect([down.status, down.upstreamStatus, down.reason, retryAfterMsOf(down)]).toEqual([503, 500, 'InternalError', 1000]);
    expect(httpStatusOf(new ProtocolError('watch Widget: a line that is not JSON'))).toBe(502);
  });
});
