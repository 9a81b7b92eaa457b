import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { env } from '../config/index.js';
import { ConfigError } from '../errors/index.js';
import { loadStartConfig } from './config.js';

const fnSchema = z.object({ WIDGETS: env.int(3).describe('How many widgets') });

function problemsOf(source: Record<string, string>): string[] {
  try {
    loadStartConfig(fnSchema, source);
  } catch (err: unknown) {
    if (err instanceof ConfigError) return err.problems.map((p) => p.path);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadStartConfig', () => {
  it('gives the defaults, frozen, when nothing is set', () => {
    const config = loadStartConfig(fnSchema, {});
    expect(config.host).toMatchObject({ PORT: 8080, BODY_LIMIT_BYTES: 1_048_576, DRAIN_TIMEOUT_MS: 20_000 });
    expect([config.fn, config.tls, Object.isFrozen(config.host), Object.isFrozen(config.fn)]).toEqual([{ WIDGETS: 3 }, undefined, true, true]);
  });

  it('reports the problems of host keys, function keys and TLS keys together', () => {
    expect(problemsOf({ PORT: '70000', BODY_LIMIT_BYTES: '0', WIDGETS: 'many', TLS_CERT_FILE: '/nonexistent/cert.pem' })).toEqual([
      'PORT',
      'BODY_LIMIT_BYTES',
      'TLS_KEY_FILE',
      'WIDGETS',
    ]);
  });

  it('takes the TLS file paths without reading them (a missing file is a readiness problem, not a start failure)', () => {
    const { tls } = loadStartConfig(fnSchema, { TLS_CERT_FILE: '/nonexistent/c.pem', TLS_KEY_FILE: '/nonexistent/k.pem', TLS_RELOAD_INTERVAL_MS: '250' });
    expect(tls).toEqual({ certFile: '/nonexistent/c.pem', keyFile: '/nonexistent/k.pem', reloadMs: 250 });
  });
});
