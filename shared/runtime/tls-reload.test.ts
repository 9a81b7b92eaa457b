import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { connect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { issueCertificate, type CertificatePair } from '../certs/index.js';
import { rootLogger } from '../log/index.js';
import { TlsReloader } from './tls.js';
import { send, startProbe } from './testing/index.js';
import type { ServerHandle } from './server.js';
import { waitFor } from '../testing/wait.js';

const HOUR = 3_600_000;
const start = Date.now();
const ca = issueCertificate({ commonName: 'reload-test-ca', usage: 'ca', notBefore: new Date(start - 24 * HOUR), notAfter: new Date(start + 48 * HOUR) });

function leaf(hours = 24, notBefore = start - HOUR): CertificatePair {
  return issueCertificate({
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    usage: 'server',
    issuer: ca,
    notBefore: new Date(notBefore),
    notAfter: new Date(notBefore + hours * HOUR),
  });
}

/** The SHA-256 fingerprint of the certificate the server presents, or the handshake's error code. */
function presented(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca: ca.certPem, servername: 'localhost' }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? 'none');
      socket.end();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(`error:${err.code ?? err.message}`));
  });
}

const fingerprint = (p: CertificatePair): string => new X509Certificate(p.certPem).fingerprint256;

describe('function host: serving certificates from files that change', () => {
  let dir: string;
  let certFile: string;
  let keyFile: string;
  let host: ServerHandle;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'runtime-reload-'));
    certFile = join(dir, 'tls.crt');
    keyFile = join(dir, 'tls.key');
    ({ host } = await startProbe({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, TLS_RELOAD_INTERVAL_MS: '100' }));
  });
  afterAll(async () => {
    await host.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts without the files and completes no handshake until a sound pair appears', async () => {
    expect(await presented(host.port)).toMatch(/^error:/);
    const first = leaf();
    await writeFile(keyFile, first.keyPem);
    await writeFile(certFile, first.certPem);
    await waitFor('the first certificate is served', async () => (await presented(host.port)) === fingerprint(first));
    const ready = await send(`${host.url.replace('127.0.0.1', 'localhost')}/health/readiness`, { ca: Buffer.from(ca.certPem) });
    expect(ready.status).toBe(200);
  });

  it('serves a rotated pair without a restart', async () => {
    const next = leaf();
    await writeFile(keyFile, next.keyPem);
    await writeFile(certFile, next.certPem);
    await waitFor('the rotated certificate is served', async () => (await presented(host.port)) === fingerprint(next));
  });
});

describe('TlsReloader', () => {
  let dir: string;
  const servers: ReturnType<typeof createServer>[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'runtime-reloader-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  async function setUp(pair: CertificatePair, now: () => Date): Promise<{ reloader: TlsReloader; port: number }> {
    await writeFile(join(dir, 'tls.crt'), pair.certPem);
    await writeFile(join(dir, 'tls.key'), pair.keyPem);
    const server = createServer((_req, res) => res.end('ok'));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const reloader = new TlsReloader({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), reloadMs: 60_000 }, server, rootLogger, now);
    await reloader.start();
    reloader.stop();
    return { reloader, port: (server.address() as AddressInfo).port };
  }

  it('refuses an expired pair from the start: not ready, no handshake', async () => {
    const expired = leaf(1, start - 3 * HOUR);
    const { reloader, port } = await setUp(expired, () => new Date());
    expect(reloader.status()).toEqual({ ok: false, reason: expect.stringMatching(/expired/) as unknown });
    expect(await presented(port)).toMatch(/^error:/);
  });

  it('keeps a sound pair over a broken update and says what it refused', async () => {
    const pair = leaf();
    const { reloader, port } = await setUp(pair, () => new Date());
    await writeFile(join(dir, 'tls.crt'), leaf().certPem); // a certificate whose key is not on disk
    await reloader.reload();
    expect(reloader.status()).toMatchObject({ ok: true, refused: expect.stringMatching(/no usable certificate/) as unknown });
    expect(await presented(port)).toBe(fingerprint(pair));
    await writeFile(join(dir, 'tls.crt'), 'garbage');
    await reloader.reload();
    expect(reloader.status()).toMatchObject({ ok: true, refused: expect.stringMatching(/no usable certificate/) as unknown });
    expect(await presented(port)).toBe(fingerprint(pair));
  });

  it('withdraws the served certificate once it expires', async () => {
    let now = new Date();
    const pair = leaf(2);
    const { reloader, port } = await setUp(pair, () => now);
    expect(await presented(port)).toBe(fingerprint(pair));
    now = new Date(start + 3 * HOUR);
    await reloader.reload();
    expect(reloader.status().ok).toBe(false);
    expect(await presented(port)).toMatch(/^error:/);
  });
});
