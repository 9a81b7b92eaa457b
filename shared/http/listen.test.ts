import { describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import { ListenError, hostPort, listen } from './listen.js';

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('listen', () => {
  it('resolves with the bound port, a free one for port 0', async () => {
    const server = createServer();
    const port = await listen(server, '127.0.0.1', 0, 'the test server');
    expect(port).toBeGreaterThan(0);
    expect(server.listening).toBe(true);
    await close(server);
  });

  it('rejects with a ListenError naming the server, the address and "address already in use" when the port is taken', async () => {
    const holder = createServer();
    const port = await listen(holder, '127.0.0.1', 0, 'the holder');
    const second = createServer();
    try {
      const err = await listen(second, '127.0.0.1', port, 'the metrics server').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ListenError);
      expect(err).toMatchObject({
        code: 'LISTEN_FAILED',
        host: '127.0.0.1',
        port,
        message: `the metrics server cannot listen on 127.0.0.1:${port}: address already in use`,
        cause: expect.objectContaining({ code: 'EADDRINUSE' }),
      });
      expect(second.listening).toBe(false);
    } finally {
      await close(holder);
    }
  });

  it('names the port alone when no host was given (every interface)', () => {
    const err = new ListenError('function echo', undefined, 8080, Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' }));
    expect(err.message).toBe('function echo cannot listen on port 8080: address already in use');
  });

  it("keeps node's message for a cause it has no words for", () => {
    const err = new ListenError('the upload endpoint', '0.0.0.0', 8444, Object.assign(new Error('listen EWHATEVER: odd'), { code: 'EWHATEVER' }));
    expect(err.message).toBe('the upload endpoint cannot listen on 0.0.0.0:8444: listen EWHATEVER: odd');
  });
});

describe('hostPort', () => {
  it('brackets an IPv6 host and leaves an IPv4 one or a name as is', () => {
    expect(hostPort('::1', 8080)).toBe('[::1]:8080');
    expect(hostPort('10.0.0.5', 8080)).toBe('10.0.0.5:8080');
    expect(hostPort('localhost', 80)).toBe('localhost:80');
  });
});
