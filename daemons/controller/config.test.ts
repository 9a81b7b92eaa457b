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
  });

  it('reports every problem together', () => {
    let caught: unknown;
    try {
      loadConfig({ VIRTUAL_MACHINE_CIDRS: '10.0.0.1/24', LEADER_ELECTION_RENEW_DEADLINE: 'never', RECONCILE_WORKERS: '0' });
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems.map((p) => p.path).sort()).toEqual([
      'LEADER_ELECTION_RENEW_DEADLINE',
      'RECONCILE_WORKERS',
      'VIRTUAL_MACHINE_CIDRS',
    ]);
  });
});
