import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { binaryHeaders, send, startProbe } from './testing/index.js';
import type { ServerHandle } from './server.js';

const run = promisify(execFile);

/** A self-signed P-256 certificate for 127.0.0.1, made with the openssl CLI. */
async function selfSignedCert(dir: string): Promise<{ certFile: string; keyFile: string }> {
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  await run('openssl', [
    'req',
    '-x509',
    '-nodes',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-days',
    '1',
    '-subj',
    '/CN=runtime-test',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ]);
  return { certFile, keyFile };
}

describe('function host with TLS_CERT_FILE and TLS_KEY_FILE', () => {
  let dir: string;
  let host: ServerHandle;
  let ca: Buffer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'runtime-tls-'));
    const { certFile, keyFile } = await selfSignedCert(dir);
    ca = await readFile(certFile);
    ({ host } = await startProbe({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile }));
  });
  afterAll(async () => {
    await host.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves HTTPS with the configured certificate', async () => {
    expect(host.url).toBe(`https://127.0.0.1:${host.port}`);
    const ready = await send(`${host.url}/health/readiness`, { ca });
    const event = await send(host.url, { method: 'POST', headers: binaryHeaders({ id: 't1', type: 'probe.echo' }), body: '{}', ca });
    expect([ready.status, event.status, event.headers['ce-id']]).toEqual([200, 200, 't1-reply']);
  });

  it('is not trusted by a client that does not know the certificate', async () => {
    const outcome = await send(`${host.url}/health/liveness`).then(
      () => 'answered',
      (err: NodeJS.ErrnoException) => err.code,
    );
    expect(outcome).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('does not answer plain HTTP on the TLS port', async () => {
    const res = await send(`http://127.0.0.1:${host.port}/health/liveness`).then(
      (r) => r.status,
      (err: NodeJS.ErrnoException) => err.code,
    );
    expect(res).not.toBe(200);
  });
});
