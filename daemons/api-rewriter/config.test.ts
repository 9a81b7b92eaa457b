import { describe, expect, it } from '@jest/globals';
import { loadConfig } from './config.js';

describe('api-rewriter config', () => {
  it("has the original's ports and a loopback proxy by default", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PROXY_HOST: '127.0.0.1',
      PROXY_PORT: 23915,
      HEALTH_PORT: 9090,
      MAX_REQUEST_BODY_BYTES: 16 * 1024 * 1024,
      METRICS_AUTH: 'kubernetes',
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reports every bad key at once', () => {
    let caught: unknown;
    try {
      loadConfig({ PROXY_PORT: '70000', MAX_REQUEST_BODY_BYTES: '12', METRICS_AUTH: 'maybe' });
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(Error);
    const text = JSON.stringify(caught, Object.getOwnPropertyNames(caught));
    for (const key of ['PROXY_PORT', 'MAX_REQUEST_BODY_BYTES', 'METRICS_AUTH']) expect(text).toContain(key);
  });
});
