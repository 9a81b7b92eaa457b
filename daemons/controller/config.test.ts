import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../../shared/errors/index.js';
import { loadConfig } from './config.js';

describe('controller configuration', () => {
  it('parses the environment into a frozen config with defaults', () => {
    const config = loadConfig({ VIRTUAL_MACHINE_CIDRS: '10.0.0.0/24, 10.1.0.0/16' });
    expect(config.VIRTUAL_MACHINE_CIDRS).toEqual(['10.0.0.0/24', '10.1.0.0/16']);
    expect(config.VIRTUAL_MACHINE_IP_LEASES_RETENTION_DURATION).toBe(600_000);
    expect(config.LEADER_ELECTION_LEASE_NAME).toBe('d8-virt-operator-leader-election-helper');
    expect(Object.isFrozen(config)).toBe(true);
    expect(config.CERT_SHARED_SECRETS).toEqual(['virtualization-dra-usbip']);
    expect(loadConfig({ CERT_SHARED_SECRETS: ' a , b,' }).CERT_SHARED_SECRETS).toEqual(['a', 'b']);
  });

  it('reports every problem together', () => {
    let caught: unknown;
    try {
      loadConfig({
        VIRTUAL_MACHINE_CIDRS: '10.0.0.1/24',
        LEADER_ELECTION_RENEW_DEADLINE: 'never',
        RECONCILE_WORKERS: '0',
        CERT_SHARED_SECRETS: 'ok,Not_A_Name',
      });
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems.map((p) => p.path).sort()).toEqual([
      'CERT_SHARED_SECRETS',
      'LEADER_ELECTION_RENEW_DEADLINE',
      'RECONCILE_WORKERS',
      'VIRTUAL_MACHINE_CIDRS',
    ]);
  });

  it('refuses a malformed DVCR_GC_SCHEDULE, naming the key and the field of the schedule; empty is off', () => {
    expect(loadConfig({}).DVCR_GC_SCHEDULE).toBe('');
    expect(loadConfig({ DVCR_GC_SCHEDULE: '@daily' }).DVCR_GC_SCHEDULE).toBe('@daily');
    let caught: unknown;
    try {
      loadConfig({ DVCR_GC_SCHEDULE: '0 2 * * * *' });
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problem = (caught as ConfigError).problems[0];
    expect(problem?.path).toBe('DVCR_GC_SCHEDULE');
    expect(problem?.message).toMatch(/invalid cron schedule: .*expected 5 fields/);
  });
});
