import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ConfigError } from '../errors/index.js';
import { env, formatPath, parseConfig, parseDurationMs } from './index.js';

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
    const nested = z.object({
      LIST: z
        .string()
        .default('a,b')
        .transform((s) => ({ items: s.split(',') })),
    });
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

describe('durations', () => {
  it.each([
    ['1200s', 1_200_000],
    ['20m', 1_200_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5s', 1_500],
    ['2m30s', 150_000],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseDurationMs(text)).toBe(ms);
  });

  it('reads a bare 0 as zero, as Go does', () => {
    expect(parseDurationMs('0')).toBe(0);
  });

  it.each(['', '10', 'soon', '5 s', '-1s', '1d', 's', '5m3'])('refuses %j', (text) => {
    expect(parseDurationMs(text)).toBeUndefined();
  });

  it('env.duration defaults, parses and names a bad value', () => {
    const schema = z.object({ WAIT: env.duration('30s') });
    expect(parseConfig(schema, {}).WAIT).toBe(30_000);
    expect(parseConfig(schema, { WAIT: '2m' }).WAIT).toBe(120_000);
    expect(() => parseConfig(schema, { WAIT: 'soon' })).toThrow(/WAIT: must be a positive duration/);
    expect(() => parseConfig(schema, { WAIT: '0s' })).toThrow(/WAIT/);
  });

  it('env.duration takes zero only where a key allows it', () => {
    const schema = z.object({ KEEP: env.duration('10m', { allowZero: true }) });
    expect(parseConfig(schema, { KEEP: '0s' }).KEEP).toBe(0);
    expect(parseConfig(schema, { KEEP: '0' }).KEEP).toBe(0);
    expect(() => parseConfig(schema, { KEEP: 'later' })).toThrow(/KEEP: must be a duration/);
  });

  it('env.cidrList splits, trims and drops blanks, empty by default', () => {
    const schema = z.object({ CIDRS: env.cidrList() });
    expect(parseConfig(schema, {}).CIDRS).toEqual([]);
    expect(parseConfig(schema, { CIDRS: ' 10.66.0.0/16, ,10.67.1.0/24 ' }).CIDRS).toEqual(['10.66.0.0/16', '10.67.1.0/24']);
  });

  it.each(['10.66.0.1/16', '10.66.0.0', '10.66.0.0/33', 'ten/8', '10.66.0.0/16,fd00::/64'])('env.cidrList names %j as broken', (text) => {
    expect(() => parseConfig(z.object({ CIDRS: env.cidrList() }), { CIDRS: text })).toThrow(/CIDRS: every entry must be an IPv4 subnet aligned to its mask/);
  });

  it('env.cidrList without alignment takes a host address with its mask, still not a broken subnet', () => {
    const schema = z.object({ PODS: env.cidrList({ aligned: false }) });
    expect(parseConfig(schema, { PODS: '10.111.0.1/16' }).PODS).toEqual(['10.111.0.1/16']);
    expect(() => parseConfig(schema, { PODS: '10.111.0.0/40' })).toThrow(/PODS: must be a comma-separated list of IPv4 subnets/);
  });
});
