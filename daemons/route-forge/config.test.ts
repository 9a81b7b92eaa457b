import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../../shared/errors/index.js';
import { loadConfig } from './config.js';

describe('route-forge configuration', () => {
  it("parses the environment into a frozen config with the original's defaults", () => {
    const config = loadConfig({ VIRTUAL_MACHINE_CIDRS: '10.66.0.0/16, 10.67.0.0/24' });
    expect(config.VIRTUAL_MACHINE_CIDRS).toEqual(['10.66.0.0/16', '10.67.0.0/24']);
    expect([config.ROUTE_TABLE_ID, config.LOCAL_DEVICE, config.DRY_RUN, config.HEALTH_PORT, config.RESYNC_INTERVAL]).toEqual([
      1490,
      'cilium_host',
      false,
      4105,
      60_000,
    ]);
    expect(config.METRICS_AUTH).toBe('kubernetes');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reports every problem together', () => {
    let caught: unknown;
    try {
      loadConfig({ VIRTUAL_MACHINE_CIDRS: '10.66.0.1/16', ROUTE_TABLE_ID: '254', LOCAL_DEVICE: 'a/b', NETNS: '../x', DRY_RUN: 'maybe' });
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems.map((p) => p.path).sort()).toEqual(['DRY_RUN', 'LOCAL_DEVICE', 'NETNS', 'ROUTE_TABLE_ID', 'VIRTUAL_MACHINE_CIDRS']);
  });
});
