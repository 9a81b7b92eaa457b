/**
 * skaffold on our skaffold.yaml, offline: skaffold v2 built from the Go module proxy
 * (tests/env/build-skaffold.sh) renders the install with no registry, no cluster and no network, every
 * unit's image named as the build artifacts say, and the Knative platform from the local copies of the
 * pinned release (tests/env/knative-platform.sh). `skaffold diagnose` reads the same configuration; a
 * broken skaffold.yaml is refused with an error naming the problem.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dump, loadAll } from 'js-yaml';
import { ensureBinaries, ensureKnativePlatform, ensureSkaffold, SKAFFOLD_SCRIPT } from '../../env/binaries.js';
import { runOffline } from '../../env/offline.js';
import { containersOf, keyOf, type Manifest } from './manifests.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SKAFFOLD_YAML = join(REPO, 'skaffold.yaml');

interface Artifact {
  image: string;
  context?: string;
  docker?: { dockerfile?: string; buildArgs?: Record<string, string> };
}
interface SkaffoldConfig {
  apiVersion: string;
  metadata: { name: string };
  build?: { artifacts?: Artifact[] };
  manifests?: { rawYaml?: string[]; kustomize?: { paths: string[] } };
  profiles?: Array<{ name: string; activation?: Array<{ command?: string }>; patches?: Array<{ value?: unknown }> }>;
}

let skaffold = '';
let home = '';
let env: NodeJS.ProcessEnv = {};
let configs: SkaffoldConfig[] = [];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run skaffold from the repository root, with no kubeconfig, no network proxy and a home of its own. */
function run(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(skaffold, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function runOk(args: string[]): Promise<string> {
  const res = await run(args);
  if (res.code !== 0) throw new Error(`skaffold ${args.join(' ')} failed (exit ${res.code}):\n${res.stderr}${res.stdout}`);
  return res.stdout;
}

const parse = (text: string): Manifest[] => loadAll(text).filter((d): d is Manifest => typeof d === 'object' && d !== null && 'kind' in d);

// Offline: no registry lookups (tags only), no update check, no cluster.
const OFFLINE = ['--offline=true', '--digest-source=tag', '--update-check=false', '--tag=test'];

/** A copy of skaffold.yaml changed by `edit`, beside the original (its paths are relative to it). */
async function withBrokenCopy<T>(edit: (docs: SkaffoldConfig[]) => void, use: (file: string) => Promise<T>): Promise<T> {
  const docs = loadAll(await readFile(SKAFFOLD_YAML, 'utf8')) as SkaffoldConfig[];
  edit(docs);
  const file = join(REPO, `.skaffold-broken-${process.pid}-${Math.random().toString(16).slice(2)}.yaml`);
  await writeFile(file, docs.map((d) => dump(d)).join('---\n'));
  try {
    return await use(file);
  } finally {
    await rm(file, { force: true });
  }
}

beforeAll(async () => {
  const [skaffoldDir, binDir] = await Promise.all([ensureSkaffold(), ensureBinaries(), ensureKnativePlatform()]);
  skaffold = join(skaffoldDir, 'skaffold');
  home = await mkdtemp(join(tmpdir(), 'skaffold-home-'));
  // kubectl (for kustomize) from the test binaries; a kubeconfig that does not exist: no cluster.
  env = {
    PATH: `${binDir}:${process.env['PATH'] ?? ''}`,
    HOME: home,
    KUBECONFIG: join(home, 'no-kubeconfig'),
    SKAFFOLD_UPDATE_CHECK: 'false',
    SKAFFOLD_DISABLE_MONITORING: 'true',
  };
  configs = loadAll(await readFile(SKAFFOLD_YAML, 'utf8')) as SkaffoldConfig[];
}, 30 * 60_000);

afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

describe('skaffold render, offline', () => {
  let rendered: Manifest[] = [];
  beforeAll(async () => {
    rendered = parse(await runOk(['render', ...OFFLINE]));
  }, 5 * 60_000);

  it('names every unit image as the build artifacts say, with the tag skaffold was given', () => {
    const artifacts = configs.flatMap((c) => c.build?.artifacts ?? []).map((a) => a.image);
    expect(artifacts.length).toBeGreaterThanOrEqual(7);
    const images = new Set(rendered.flatMap((m) => containersOf(m).map((c) => c.image)));
    for (const image of artifacts) expect(images).toContain(`${image}:test`);
    // No workload of ours keeps an image skaffold did not set.
    const ours = [...images].filter((i) => i.startsWith('dev.local/'));
    expect(ours.sort()).toEqual(artifacts.map((i) => `${i}:test`).sort());
  });

  it('includes the whole install of knative/ and the Knative platform from the pinned local copies', async () => {
    const keys = new Set(rendered.map(keyOf));
    const platform = await ensureKnativePlatform();
    const files = (await readdir(platform)).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBe(5);
    for (const f of files) {
      const objects = parse(await readFile(join(platform, f), 'utf8'));
      expect(objects.length).toBeGreaterThan(0);
      for (const o of objects) expect(keys).toContain(keyOf(o));
    }
    const version = (await readFile(join(REPO, 'tests/env/knative-version'), 'utf8')).trim();
    const knativeImages = rendered.flatMap((m) => containersOf(m).map((c) => c.image)).filter((i) => i.includes('/knative.dev/'));
    expect(knativeImages.length).toBeGreaterThan(5);
    for (const i of knativeImages) expect(i).toMatch(new RegExp(`:v${version.replaceAll('.', '\\.')}$`));
    expect(keys).toContain('Deployment/knative-serving/webhook');
    expect(keys).toContain('CustomResourceDefinition/services.serving.knative.dev');
    expect(keys).toContain('Service/d8-virtualization/admission');
  });

  it('fetches nothing to render: the only remote manifest (Kourier) is in the deploy-time profile, at the pinned release', async () => {
    const version = (await readFile(join(REPO, 'tests/env/knative-version'), 'utf8')).trim();
    for (const c of configs) for (const f of c.manifests?.rawYaml ?? []) expect(f).not.toMatch(/^https?:/);
    const remote = configs.flatMap((c) => c.profiles ?? []).flatMap((p) => (p.patches ?? []).map((x) => ({ p, value: String(x.value) })));
    const urls = remote.filter((r) => /^https?:/.test(r.value));
    expect(urls.length).toBe(1);
    expect(urls[0]?.value).toContain(`/knative-v${version}/`);
    expect(urls[0]?.p.activation?.map((a) => a.command).sort()).toEqual(['deploy', 'dev', 'run']);
  });
});

describe('skaffold diagnose', () => {
  // The full diagnose resolves the Dockerfile's base images in a registry: only --yaml-only runs offline.
  it('reads both configurations and every artifact offline (--yaml-only)', async () => {
    const out = await runOk(['diagnose', '--yaml-only', '--update-check=false']);
    const docs = loadAll(out) as SkaffoldConfig[];
    expect(docs.map((d) => d.metadata.name)).toEqual(['knative-platform', 'virtualization']);
    expect(docs[1]?.build?.artifacts?.map((a) => a.image)).toEqual(configs[1]?.build?.artifacts?.map((a) => a.image));
  });
});

describe('a broken skaffold.yaml', () => {
  it('with an unknown apiVersion is refused, naming it', async () => {
    const res = await withBrokenCopy(
      (docs) => {
        docs[0].apiVersion = 'skaffold/v9alpha1';
      },
      (file) => run(['render', ...OFFLINE, '--filename', file]),
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr + res.stdout).toContain('skaffold/v9alpha1');
  });

  // (An artifact whose context does not exist is not caught offline: skaffold checks contexts only
  // when it builds or, in a full `diagnose`, after resolving the Dockerfile's base images in a registry.)
  it('with a kustomize directory of the install that does not exist is refused, naming it', async () => {
    const res = await withBrokenCopy(
      (docs) => {
        docs[1].manifests!.kustomize!.paths = ['knative/standalone', 'knative/no-such-dir'];
      },
      (file) => run(['render', ...OFFLINE, '--filename', file]),
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr + res.stdout).toContain('knative/no-such-dir');
  });

  it('with a local Knative copy missing is refused, naming the file', async () => {
    const res = await withBrokenCopy(
      (docs) => {
        docs[0].manifests!.rawYaml![0] = '.knative-platform/no-such-release.yaml';
      },
      (file) => run(['render', ...OFFLINE, '--filename', file]),
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr + res.stdout).toContain('no-such-release.yaml');
  });
});

describe('building skaffold', () => {
  it('returns the cached binary at once, and with it missing and no Go module proxy names it and how to build it', () => {
    const cached = spawnSync('bash', [SKAFFOLD_SCRIPT], { encoding: 'utf8' });
    expect(cached.status).toBe(0);
    expect(cached.stdout.trim()).toBe(join(skaffold, '..'));
    // An empty cache and module cache, and no proxy: nothing to build from.
    const offline = runOffline(SKAFFOLD_SCRIPT);
    expect(offline.status).not.toBe(0);
    expect(offline.stderr).toContain(`missing: ${offline.cache}/skaffold-`);
    expect(offline.stderr).toContain('Go module proxy is not reachable');
    expect(offline.stderr).toContain("build it with 'bash tests/env/build-skaffold.sh'");
  });
});
