/**
 * A real OCI registry for tests: Debian's `docker-registry` (distribution 2.8) on a loopback port
 * with a temporary config and storage, no auth. Test support only, not shipped behaviour.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../tests/env/ports.js';
import { waitFor } from '../testing/wait.js';

export const REGISTRY_BINARY = '/usr/bin/docker-registry';

export interface TestRegistry {
  /** host:port */
  readonly host: string;
  /** `http://host:port`, the prefix our references take for a plain-HTTP registry. */
  readonly url: string;
  stop(): Promise<void>;
}

export interface TestRegistryOptions {
  /** Require these credentials (htpasswd, bcrypt made by python3's crypt; Basic auth over plain HTTP). */
  readonly user?: { readonly name: string; readonly password: string };
}

function bcryptHash(password: string): string {
  const script = 'import crypt,sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))';
  return execFileSync('python3', ['-W', 'ignore', '-c', script, password], { encoding: 'utf8' }).trim();
}

export async function startTestRegistry(opts: TestRegistryOptions = {}): Promise<TestRegistry> {
  if (!existsSync(REGISTRY_BINARY))
    throw new Error(`${REGISTRY_BINARY} is missing: install the Debian package docker-registry (tests/env/install-deps.sh does)`);
  const dir = mkdtempSync(join(tmpdir(), 'test-registry-'));
  const port = await freePort();
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: error',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'data')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: 127.0.0.1:${port}`,
      ...(opts.user !== undefined ? ['auth:', '  htpasswd:', '    realm: test-registry', `    path: ${join(dir, 'htpasswd')}`] : []),
      '',
    ].join('\n'),
  );
  if (opts.user !== undefined) writeFileSync(join(dir, 'htpasswd'), `${opts.user.name}:${bcryptHash(opts.user.password)}\n`);
  const child: ChildProcess = spawn(REGISTRY_BINARY, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  let exited = false;
  child.once('exit', () => (exited = true));
  const host = `127.0.0.1:${port}`;
  try {
    await waitFor(`docker-registry on ${host}`, async () => {
      if (exited) throw new Error(`docker-registry exited: ${stderr}`);
      const res = await fetch(`http://${host}/v2/`).catch(() => undefined);
      return res?.status === (opts.user !== undefined ? 401 : 200);
    });
  } catch (err: unknown) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    host,
    url: `http://${host}`,
    stop: async () => {
      if (!exited) {
        const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
