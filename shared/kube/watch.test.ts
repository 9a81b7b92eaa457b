import { describe, expect, it } from '@jest/globals';
import { AppError, KubeApiError, NotFoundError, ProtocolError, UnavailableError } from '../errors/index.js';
import { isGone } from './errors.js';
import { decodeWatchLine } from './watch.js';

describe('watch line decoding', () => {
  it('decodes an ADDED event', () => {
    const line = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '5' } } });
    expect(decodeWatchLine(line, 'watch Widget')).toEqual({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '5' } } });
  });

  it('turns an ERROR event with code 410 into a Gone error', () => {
    const line = JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (99)' } });
    let caught: unknown;
    try {
      decodeWatchLine(line, 'watch Widget');
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(KubeApiError);
    expect(isGone(caught)).toBe(true);
  });

  it('classifies an ERROR event by its code', () => {
    const line = JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 404, reason: 'NotFound' } });
    expect(() => decodeWatchLine(line, 'watch Widget')).toThrow(NotFoundError);
  });

  it('classifies an ERROR event with a 5xx code as the server being unavailable, keeping its reason', () => {
    const line = JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd is down' } });
    let caught: unknown;
    try {
      decodeWatchLine(line, 'watch Widget');
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UnavailableError);
    expect(caught).toMatchObject({ upstreamStatus: 500, reason: 'InternalError' });
  });

  it.each(['not json', '{"type":"ADDED"}', '{"type":"SOMETHING","object":{}}', '{"type":"ADDED","object":null}', 'null'])(
    'rejects %j as the server breaking the protocol (502), not as a bad request of ours',
    (line) => {
      let caught: unknown;
      try {
        decodeWatchLine(line, 'watch Widget');
      } catch (err: unknown) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ProtocolError);
      expect([(caught as AppError).code, (caught as AppError).status]).toEqual(['PROTOCOL', 502]);
    },
  );
});
