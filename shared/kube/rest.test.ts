import { afterEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { RestTransport } from './rest.js';

/** A KubeConfig for a plain-HTTP test server that counts how often credentials are read. */
class CountingKubeConfig extends KubeConfig {
  reads = 0;
  override async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    this.reads++;
    opts.headers = { Authorization: `Bearer token-${this.reads}` };
    return Promise.resolve();
  }
}

function kubeConfigFor(server: string): CountingKubeConfig {
  const kc = new CountingKubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('RestTransport credentials', () => {
  let server: http.Server | undefined;
  afterEach(() => {
    server?.close();
  });

  it('reads credentials once per refresh interval, not per request, and re-reads after it', async () => {
    const seen: string[] = [];
    server = http.createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.end('{}');
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const kc = kubeConfigFor(`http://127.0.0.1:${port}`);
    const clock = { ms: 1_000_000 };
    const rest = new RestTransport(kc, 5_000, 200, () => clock.ms);
    const probe = (): Promise<unknown> => rest.request({ method: 'GET', path: '/api', what: 'probe' });
    try {
      for (let i = 0; i < 20; i++) await probe();
      clock.ms += 199;
      await probe();
      expect(kc.reads).toBe(1);
      clock.ms += 1;
      await probe();
      expect(kc.reads).toBe(2);
      expect(seen.at(0)).toBe('Bearer token-1');
      expect(seen.at(-1)).toBe('Bearer token-2');
    } finally {
      rest.close();
    }
  });
});
