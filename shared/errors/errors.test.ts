import { describe, expect, it } from '@jest/globals';
import { BadRequestError, ConflictError, ValidationError, errorMessage, httpStatusOf } from './index.js';

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
});
