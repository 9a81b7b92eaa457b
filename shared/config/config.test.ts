import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ConfigError } from '../errors/index.js';
import { env, formatPath, parseConfig } from './index.js';

const schema = z.object({
  PORT: env.port(8080).describe('listen port'),
  WORKERS: env.int(2, 1).describe('worker count'),
  TLS: env.bool(false).describe('serve TLS'),
  NAME: env.string('svc').describe('service name'),
  LOG_LEVEL: env.logLevel().describe('log level'),
});

describe('parseConfig', () => {
  it('fills every default when the environment is empty', () => {
    expect(parseConfig(schema, {})).toEqual({ PORT: 8080, WORKERS: 2, TLS: false, NAME: 'svc', LOG_LEVEL: 'info' });
  });

  it('coerces strings from the environment', () => {
    const cfg = parseConfig(schema, { PORT: '9000', WORKERS: '4', TLS: 'yes', NAME: 'x', LOG_LEVEL: 'debug' });
    expect(cfg).toEqual({ PORT: 9000, WORKERS: 4, TLS: true, NAME: 'x', LOG_LEVEL: 'debug' });
  });

  it('reports every bad key at once in one error', () => {
    let caught: unknown;
    try {
      parseConfig(schema, { PORT: '70000', WORKERS: '0', TLS: 'maybe', LOG_LEVEL: 'loud' });
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems.map((p) => p.path).sort();
    expect(problems).toEqual(['LOG_LEVEL', 'PORT', 'TLS', 'WORKERS']);
    expect((caught as ConfigError).message).toMatch(/PORT: .*WORKERS|PORT.*TLS/s);
    expect((caught as ConfigError).code).toBe('CONFIG_INVALID');
  });

  it('treats an empty variable as unset', () => {
    expect(parseConfig(schema, { PORT: '' }).PORT).toBe(8080);
  });

  it('returns a deeply frozen object', () => {
    const nested = z.object({ LIST: z.string().default('a,b').transform((s) => ({ items: s.split(',') })) });
    const cfg = parseConfig(nested, {});
    expect(Object.isFrozen(cfg)).toBe(true);
    expect(Object.isFrozen(cfg.LIST.items)).toBe(true);
  });
});

describe('formatPath', () => {
  it('joins keys with dots and indexes with brackets', () => {
    expect(formatPath(['spec', 'blockDeviceRefs', 16, 'name'])).toBe('spec.blockDeviceRefs[16].name');
    expect(formatPath([])).toBe('');
  });
});
