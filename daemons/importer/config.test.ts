import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../../shared/errors/index.js';
import { loadConfig } from './config.js';

const base = { IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'http://example.test/disk.qcow2', IMPORTER_DESTINATION_PATH: '/data/disk.img' };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err: unknown) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  return [];
}

describe('importer config', () => {
  it('has defaults for everything but the source and destination', () => {
    const c = loadConfig(base);
    expect(c.IMPORTER_CHECKSUMS).toEqual({});
    expect(c.IMPORTER_TERMINATION_LOG).toBe('/dev/termination-log');
    expect(c.UPLOADER_WAIT_TIMEOUT).toBe(600_000);
    expect(c.UPLOADER_PORT).toBe(8444);
    expect(c.IMPORTER_METRICS_PORT).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads checksums as the JSON of spec.dataSource.http.checksum', () => {
    const sha = 'a'.repeat(64);
    expect(loadConfig({ ...base, IMPORTER_CHECKSUMS: JSON.stringify({ sha256: sha }) }).IMPORTER_CHECKSUMS).toEqual({ sha256: sha });
  });

  it.each([
    ['not JSON', '{sha256:', /must be JSON/],
    ['a short md5', '{"md5":"abc"}', /md5 must be 32 hex digits/],
    ['an unknown algorithm', '{"sha1":"abc"}', /sha1/],
  ])('names the problem with checksums that are %s', (_what, value, message) => {
    expect(problems({ ...base, IMPORTER_CHECKSUMS: value }).join('\n')).toMatch(message);
  });

  it('reports every problem together', () => {
    const found = problems({ IMPORTER_SOURCE: 'ftp', UPLOADER_WAIT_TIMEOUT: 'soon' });
    expect(found.some((p) => p.startsWith('IMPORTER_SOURCE'))).toBe(true);
    expect(found.some((p) => p.startsWith('UPLOADER_WAIT_TIMEOUT'))).toBe(true);
  });

  it('reports a missing destination beside a malformed key', () => {
    const found = problems({ IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'http://x/y', IMPORTER_CHECKSUMS: '{"sha256":"short"}' }).join('\n');
    expect(found).toMatch(/sha256 must be 64 hex digits/);
    expect(found).toMatch(/exactly one of/);
  });

  it('wants exactly one destination and an endpoint except for uploads', () => {
    expect(problems({ IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'http://x/y' })).toEqual([expect.stringMatching(/exactly one of/)]);
    expect(problems({ ...base, IMPORTER_DESTINATION_ENDPOINT: 'dvcr.test/vi/a:b' })).toEqual([expect.stringMatching(/exactly one of/)]);
    expect(problems({ ...base, IMPORTER_DESTINATION_DEVICE: '/dev/x' })).toEqual([
      expect.stringMatching(/IMPORTER_DESTINATION_PATH and IMPORTER_DESTINATION_DEVICE/),
    ]);
    expect(problems({ IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'http://x/y', IMPORTER_DESTINATION_DEVICE: '/dev/x' })).toEqual([]);
    expect(problems({ IMPORTER_SOURCE: 'registry', IMPORTER_DESTINATION_PATH: '/d' })).toEqual([expect.stringMatching(/IMPORTER_ENDPOINT: is required/)]);
    expect(problems({ IMPORTER_SOURCE: 'upload', IMPORTER_DESTINATION_PATH: '/d' })).toEqual([]);
    expect(problems({ ...base, IMPORTER_ENDPOINT: 'ftp://x/y' })).toEqual([expect.stringMatching(/http:\/\/ or https:\/\//)]);
  });
});
