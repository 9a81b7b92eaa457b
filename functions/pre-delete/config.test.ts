import { describe, expect, it } from '@jest/globals';
import { parseConfig } from '../../shared/config/index.js';
import { ConfigError } from '../../shared/errors/index.js';
import { preDeleteConfig } from './config.js';

describe('pre-delete configuration', () => {
  it('defaults to the KubeVirt and CDI `config` objects, a 300 s deadline and a 2 s poll', () => {
    const config = parseConfig(preDeleteConfig, {});
    expect([config.RESOURCES, config.WAIT_TIMEOUT, config.POLL_INTERVAL, config.MODULE_CONFIG_NAME]).toEqual([
      [
        {
          gvr: { group: 'internal.virtualization.deckhouse.io', version: 'v1', resource: 'internalvirtualizationkubevirts' },
          namespace: 'd8-virtualization',
          name: 'config',
        },
        { gvr: { group: 'cdi.internal.virtualization.deckhouse.io', version: 'v1beta1', resource: 'internalvirtualizationcdis' }, name: 'config' },
      ],
      300_000,
      2_000,
      'virtualization',
    ]);
  });

  it('reads RESOURCES in the original shape, GVR keys capitalised as Go wrote them', () => {
    const RESOURCES = JSON.stringify([
      { gvr: { Group: 'internal.virtualization.deckhouse.io', Version: 'v1', Resource: 'internalvirtualizationkubevirts' }, namespace: 'ns', name: 'config' },
    ]);
    expect(parseConfig(preDeleteConfig, { RESOURCES }).RESOURCES).toEqual([
      { gvr: { group: 'internal.virtualization.deckhouse.io', version: 'v1', resource: 'internalvirtualizationkubevirts' }, namespace: 'ns', name: 'config' },
    ]);
  });

  it('reports every broken key at once, each by name', () => {
    const broken = { RESOURCES: '[{"gvr": {}', WAIT_TIMEOUT: 'soon', POLL_INTERVAL: '0s' };
    let caught: unknown;
    try {
      parseConfig(preDeleteConfig, broken);
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems.map((p) => p.path).sort()).toEqual(['POLL_INTERVAL', 'RESOURCES', 'WAIT_TIMEOUT']);
  });

  it.each([
    ['[]', 'RESOURCES'],
    ['[{"gvr": {"group": "g", "version": "v1", "resource": "r"}}]', 'RESOURCES[0].name'],
    ['[{"gvr": {"group": "g", "version": "v1", "resource": "r"}, "name": "x", "colour": "red"}]', 'RESOURCES[0]'],
  ])('refuses RESOURCES %s, naming %s', (RESOURCES, path) => {
    expect(() => parseConfig(preDeleteConfig, { RESOURCES })).toThrow(path);
  });
});
