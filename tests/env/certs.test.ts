import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createCA, issueCert } from './certs.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('test certificates', () => {
  it('signs many certificates of one CA at once, each with its own serial and verifiable by the CA', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certs-test-'));
    dirs.push(dir);
    const ca = await createCA(dir, 'one');
    // Concurrent signing is what the platform does (virt-api, virt-handler, webhook proxy…); a shared
    // serial file failed there with "Unable to load number from one-ca.srl".
    const leaves = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        issueCert(ca, dir, `leaf-${i}`, { commonName: `leaf-${i}`, usage: i % 2 === 0 ? 'server' : 'client', dnsNames: ['localhost'] }),
      ),
    );
    const serials = await Promise.all(leaves.map(async (l) => (await run('openssl', ['x509', '-in', l.certPath, '-noout', '-serial'])).stdout.trim()));
    expect(new Set(serials).size).toBe(8);
    for (const l of leaves) {
      const { stdout } = await run('openssl', ['verify', '-CAfile', ca.certPath, l.certPath]);
      expect(stdout).toContain(': OK');
    }
  });
});
