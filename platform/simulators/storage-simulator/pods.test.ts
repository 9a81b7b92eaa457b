import { describe, expect, it } from '@jest/globals';
import { forwardedLine } from './pods.js';

describe('forwardedLine', () => {
  it('forwards progress, the uploader address and error and fatal lines as the importer writes them (level labels)', () => {
    expect(forwardedLine({ level: 'info', msg: 'progress', ratio: 0.5 })).toBe(true);
    expect(forwardedLine({ level: 'info', msg: 'uploader listening', port: 8444 })).toBe(true);
    expect(forwardedLine({ level: 'error', reason: 'InternalError', msg: 'the metrics server cannot listen on 127.0.0.5:8080: address already in use' })).toBe(
      true,
    );
    expect(forwardedLine({ level: 'fatal', msg: 'importer failed' })).toBe(true);
  });

  it('keeps other info, debug and warn lines to itself', () => {
    expect(forwardedLine({ level: 'info', msg: 'metrics listening', port: 8080 })).toBe(false);
    expect(forwardedLine({ level: 'warn', msg: 'upload broke off; waiting for a new one' })).toBe(false);
    expect(forwardedLine({ level: 'debug', msg: 'qemu-img' })).toBe(false);
    expect(forwardedLine({ msg: 'not JSON' })).toBe(false);
  });
});
