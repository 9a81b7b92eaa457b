/**
 * A real OCI registry on loopback: Debian's `docker-registry` (distribution 2.8) on a free port with
 * its config, storage and log in one directory, plain HTTP, optionally with Basic auth. The local
 * platform of `npm start` runs it as DVCR; the tests run it as theirs. One way to start it for both.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { logShowsPortInUse, spawnLogged, tailLog, type LoggedProcess } from './process.js';
import { waitFor } from '../../shared/testing/wait.js';
import { MEDIA, RegistryClient } from '../../shared/oci/client.js';
import { parseImageReference } from '../../shared/oci/reference.js';

export const REGISTRY_BINARY = '/usr/bin/docker-registry';

export interface LocalRegistry {
  /** host:port */
  readonly host: string;
  /** `http://host:port`, the prefix our references take for a plain-HTTP registry. */
  readonly url: string;
  /** The registry process (the platform's supervisor watches it). */
  readonly process: LoggedProcess;
  /** Config, `data/` (the blobs) and `registry-<attempt>.log`. */
  readonly dir: string;
  /** The config file (what `docker-registry garbage-collect` takes). */
  readonly config: string;
  /** SIGTERM (SIGKILL after 3 s); the directory is removed unless it was given. */
  stop(): Promise<void>;
}

export interface LocalRegistryOptions {
  /** Keep config, storage and log here (kept after stop); a temporary directory otherwise (removed). */
  readonly dir?: string;
  /** Require these credentials (htpasswd, bcrypt made by python3's crypt; Basic auth over plain HTTP). */
  readonly user?: { readonly name: string; readonly password: string };
  /** Run the registry in a process group of its own (the platform stops its children itself). */
  readonly detached?: boolean;
}

function bcryptHash(password: string): string {
  const script = 'import crypt,sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))';
  return execFileSync('python3', ['-W', 'ignore', '-c', script, password], { encoding: 'utf8' }).trim();
}

/** The registry's config file for `port` (storage under `dir/data`). */
export function registryConfig(dir: string, port: number, user: LocalRegistryOptions['user']): string {
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
      ...(user !== undefined ? ['auth:', '  htpasswd:', '    realm: local-registry', `    path: ${join(dir, 'htpasswd')}`] : []),
      '',
    ].join('\n'),
  );
  if (user !== undefined) writeFileSync(join(dir, 'htpasswd'), `${user.name}:${bcryptHash(user.password)}\n`);
  return config;
}

/** Start the registry and wait until `/v2/` answers; a port taken in between is retried on another. */
export async function startLocalRegistry(opts: LocalRegistryOptions = {}): Promise<LocalRegistry> {
  if (!existsSync(REGISTRY_BINARY))
    throw new Error(`${REGISTRY_BINARY} is missing: install the Debian package docker-registry (tests/env/install-deps.sh does)`);
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'local-registry-'));
  mkdirSync(dir, { recursive: true });
  const remove = (): void => {
    if (opts.dir === undefined) rmSync(dir, { recursive: true, force: true });
  };
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const host = `127.0.0.1:${port}`;
    const logPath = join(dir, `registry-${attempt}.log`);
    const config = registryConfig(dir, port, opts.user);
    const proc = spawnLogged('dvcr', REGISTRY_BINARY, ['serve', config], logPath, { detached: opts.detached === true });
    try {
      await waitFor(`docker-registry on ${host}`, async () => {
        if (proc.hasExited()) throw new Error(`docker-registry exited (log ${logPath}):\n${tailLog(logPath)}`);
        const res = await fetch(`http://${host}/v2/`).catch(() => undefined);
        return res?.status === (opts.user !== undefined ? 401 : 200);
      });
    } catch (err: unknown) {
      await proc.kill();
      if (attempt < 5 && logShowsPortInUse(logPath)) continue;
      remove();
      throw err;
    }
    return {
      host,
      url: `http://${host}`,
      process: proc,
      dir,
      config,
      stop: async () => {
        await proc.stop(3_000);
        remove();
      },
    };
  }
}

/**
 * The registry's own blob garbage collection over its storage (offline mark and sweep; untagged
 * manifests too), as DVCR's cleaner runs it after deleting manifests: the command line the
 * controller's DVCR_GC_COMMAND takes for this registry.
 */
export function garbageCollectCommand(registry: Pick<LocalRegistry, 'config'>): string {
  return `${REGISTRY_BINARY} garbage-collect ${registry.config} --delete-untagged`;
}

/** Push a small one-layer image to `<registryUrl>/<repository>:<tag>`; returns the manifest and layer digests. */
export async function pushTestImage(registryUrl: string, repository: string, tag: string, content: string): Promise<{ manifest: string; layer: string }> {
  const client = new RegistryClient(parseImageReference(`${registryUrl}/${repository}:${tag}`));
  const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
  const layer = Buffer.from(content);
  const config = Buffer.from(JSON.stringify({ created: content }));
  await client.pushBlob(layer, sha(layer));
  await client.pushBlob(config, sha(config));
  const manifest = await client.putManifest(
    {
      schemaVersion: 2,
      mediaType: MEDIA.ociManifest,
      config: { mediaType: MEDIA.ociConfig, digest: sha(config), size: config.length },
      layers: [{ mediaType: MEDIA.ociLayerTar, digest: sha(layer), size: layer.length }],
    },
    MEDIA.ociManifest,
  );
  return { manifest, layer: sha(layer) };
}
