import { describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import net, { type AddressInfo } from 'node:net';
import { ListenError } from '../../shared/http/listen.js';
import { KubeClient } from '../../shared/kube/index.js';
import { rootLogger } from '../../shared/log/index.js';
import { loadConfig } from './config.js';
import { runApiRewriter } from './daemon.js';

describe('runApiRewriter', () => {
  it('fails with a ListenError naming the proxy and its address when the proxy port is taken', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const stop = new AbortController();
    try {
      const config = loadConfig({ PROXY_HOST: '127.0.0.1', PROXY_PORT: String(port), HEALTH_HOST: '127.0.0.1', HEALTH_PORT: '0' });
      const handle = runApiRewriter({ config, kube: new KubeClient(kc), signal: stop.signal, logger: rootLogger });
      const err = await handle.listening.catch((e: unknown) => e);
      await handle.done.catch(() => undefined);
      expect(err).toBeInstanceOf(ListenError);
      expect(err).toHaveProperty('message', `the proxy cannot listen on 127.0.0.1:${port}: address already in use`);
    } finally {
      stop.abort();
      holder.close();
    }
  });
});
