import { describe, expect, it } from '@jest/globals';
import { PodAddresses } from './addresses.js';
import { loadConfig } from './config.js';

describe('PodAddresses', () => {
  it('hands out distinct loopback addresses of its /16, never .0 or .255 as the last octet', () => {
    const a = new PodAddresses('127.42');
    const seen = new Set<string>();
    for (let i = 0; i < 600; i++) seen.add(a.next());
    expect(seen.size).toBe(600);
    for (const ip of seen) expect(ip).toMatch(/^127\.42\.\d{1,3}\.(\d{1,3})$/);
    expect([...seen].some((ip) => /\.(0|255)$/.test(ip))).toBe(false);
    expect([...seen][0]).toBe('127.42.0.1');
    expect([...seen][254]).toBe('127.42.1.1');
  });

  it('draws a random 127.<n> when none is given', () => {
    expect(new PodAddresses().prefix).toMatch(/^127\.(\d{1,3})$/);
  });

  it.each(['10.1', '127.0', '127.255', '127', '127.1.2', 'abc'])('refuses the prefix %s', (prefix) => {
    expect(() => new PodAddresses(prefix)).toThrow(/127\.<1-254>/);
  });
});

describe('config', () => {
  it('needs a volumes directory and defaults the rest', () => {
    expect(() => loadConfig({})).toThrow(/VOLUMES_DIR/);
    const c = loadConfig({ VOLUMES_DIR: '/tmp/v' });
    expect(c).toMatchObject({
      STORAGE_CLASSES: ['local-simulated', 'local-simulated-rwx', 'local-simulated-wffc'],
      POD_SELECTOR: 'virtualization.deckhouse.io/helper',
      REQUIRE_NODE: true,
    });
  });

  it('reports every bad key together', () => {
    expect(() => loadConfig({ VOLUMES_DIR: '/tmp/v', POD_IP_PREFIX: '10.0', REQUIRE_NODE: 'maybe' })).toThrow(
      /POD_IP_PREFIX[\s\S]*REQUIRE_NODE|REQUIRE_NODE[\s\S]*POD_IP_PREFIX/,
    );
  });

  it('splits the storage classes', () => {
    expect(loadConfig({ VOLUMES_DIR: '/v', STORAGE_CLASSES: ' a, b ,,c' }).STORAGE_CLASSES).toEqual(['a', 'b', 'c']);
  });
});
