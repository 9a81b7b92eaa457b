import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { binaryHeaders, listeningPort, REPO_ROOT, send, startNodeProcess } from '../runtime/testing/index.js';
import { IMAGE_ENV } from './image-env.js';
import { bundledCompanions, bundleEntries, codeCacheState } from './index.js';

/** Copy a bundled unit's three files into `app` as the Dockerfile does (`main.cjs` and its companions); returns main.cjs. */
async function install(startFile: string, app: string): Promise<string> {
  await mkdir(app, { recursive: true });
  const main = join(app, 'main.cjs');
  const from = bundledCompanions(startFile);
  const to = bundledCompanions(main);
  await copyFile(startFile, main);
  await copyFile(from.code, to.code);
  await copyFile(from.cache, to.cache);
  return main;
}

/** Start sample-echo from `main` and check that it echoes one CloudEvent. */
async function expectEcho(main: string): Promise<void> {
  const proc = startNodeProcess([main], { env: { PORT: '0', HOST: '127.0.0.1', METRICS_AUTH: 'none', NODE_PATH: '' } });
  try {
    const url = `http://127.0.0.1:${await listeningPort(proc)}`;
    const echo = await send(url, { method: 'POST', headers: binaryHeaders({ id: 'b1', type: 'bundle' }), body: '{"n":1}' });
    expect([echo.status, echo.headers['ce-type'], echo.json()]).toEqual([200, 'bundle.echo', { n: 1 }]);
  } finally {
    proc.kill();
  }
}

/**
 * The image's start-up file: a function bundled with its npm packages, copied alone to a directory
 * with no node_modules and run as `main.mjs` (as the Dockerfile does), still serves.
 */
describe('bundleEntries', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bundle-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  let echoFile: string;
  it('makes a self-contained unit that serves the function as its own entry, compiled from its code cache', async () => {
    const files = await bundleEntries({ root: REPO_ROOT, entries: ['functions/sample-echo/index.ts'], outdir: join(dir, 'out'), packages: 'bundled' });
    echoFile = files.get('functions/sample-echo/index.ts') ?? '';
    const main = await install(echoFile, join(dir, 'app'));
    expect(await codeCacheState(main)).toBe('used');
    await expectEcho(main);
  });

  it('compiles from scratch, and still serves, when the code cache is garbage, missing or made for other V8 flags', async () => {
    const garbage = await install(echoFile, join(dir, 'garbage'));
    await writeFile(bundledCompanions(garbage).cache, Buffer.from('not a V8 code cache'));
    expect(await codeCacheState(garbage)).toBe('rejected');
    await expectEcho(garbage);

    const missing = await install(echoFile, join(dir, 'missing'));
    await rm(bundledCompanions(missing).cache);
    expect(await codeCacheState(missing)).toBe('missing');
    await expectEcho(missing);

    // V8 checks the flags that change compiled code (a cache made without --jitless is refused with it);
    // since V8 14 (Node 26) heap sizes are no longer among them, so the audit Service's young
    // generation cap keeps the cache (the image still makes it with the unit's NODE_OPTIONS).
    const app = garbage.replace('garbage', 'app');
    expect(await codeCacheState(app, '--jitless')).toBe('rejected');
    expect(await codeCacheState(app, '--max-semi-space-size=4')).toBe('used');
  });

  it("loads credentials through client-node's KubeConfig, an exec plugin's included, without bundling client-node's generated API", async () => {
    const entry = 'shared/bundle/testdata/credentials.ts';
    const files = await bundleEntries({ root: REPO_ROOT, entries: [entry], outdir: join(dir, 'credentials'), packages: 'bundled' });
    const main = await install(files.get(entry) ?? '', join(dir, 'credentials-app'));
    // The generated API (a class per resource, its serializer) is left out: shared/bundle/index.ts.
    const code = await readFile(bundledCompanions(main).code, 'utf8');
    expect([code.includes('ObjectSerializer'), code.includes('class V1PodSpec')]).toEqual([false, false]);
    const plugin = join(dir, 'credential-plugin.sh');
    const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-the-plugin' } };
    await writeFile(plugin, `#!/bin/sh\necho '${JSON.stringify(credential)}'\n`, { mode: 0o755 });
    const kubeconfig = join(dir, 'exec-kubeconfig');
    await writeFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
        users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    const proc = startNodeProcess([main], { env: { KUBECONFIG: kubeconfig, NODE_PATH: '' } });
    const [exitCode] = (await once(proc.child, 'close')) as [number | null];
    expect([exitCode, proc.logs.at(-1)]).toEqual([
      0,
      { server: 'https://127.0.0.1:6443', headers: { Authorization: 'Bearer from-the-plugin' }, stream: 'stdout' },
    ]);
  });

  it("serves the entry's own definition when it imports another function's module (every module has the bundle's URL)", async () => {
    // bench-entry imports functions/admission/index.ts, whose runIfMain would serve the real admission
    // (and fail here, with no cluster to reach); the entry's own runs it with in-memory lookups.
    const entry = 'functions/admission/testing/bench-entry.ts';
    const files = await bundleEntries({ root: REPO_ROOT, entries: [entry], outdir: join(dir, 'nested'), packages: 'bundled' });
    const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1', METRICS_AUTH: 'none', KUBECONFIG: join(dir, 'no-such-kubeconfig') };
    const proc = startNodeProcess([files.get(entry) ?? ''], { env });
    try {
      await listeningPort(proc);
      expect(proc.logs.filter((r) => r['level'] === 'fatal')).toEqual([]);
    } finally {
      proc.kill();
    }
  });

  it('runs every unit the Dockerfile bundles alone as main.cjs, from its code cache: its runIfMain/runDaemonIfMain sees itself as the entry', async () => {
    // A configuration error is the entry's own answer and needs no apiserver: every module loaded and
    // the entry ran. Daemons: a fatal line, exit 2; functions: a fatal line of their component, exit 1.
    const daemons = readdirSync(join(REPO_ROOT, 'daemons')).map((d) => `daemons/${d}/main.ts`);
    const functions = readdirSync(join(REPO_ROOT, 'functions')).map((f) => `functions/${f}/index.ts`);
    const files = await bundleEntries({ root: REPO_ROOT, entries: [...daemons, ...functions], outdir: join(dir, 'units'), packages: 'bundled' });
    for (const entry of [...daemons, ...functions]) {
      const [kind, name] = entry.split('/');
      const main = await install(files.get(entry) ?? '', join(dir, 'unit-app', kind ?? '', name ?? ''));
      expect([entry, await codeCacheState(main)]).toEqual([entry, 'used']);
      const proc = startNodeProcess([main], { env: { LOG_LEVEL: 'no-such-level', NODE_ENV: 'production', NODE_PATH: '' } });
      // 'close' (not 'exit'): every line of stdout has been read by then.
      const [code] = (await once(proc.child, 'close')) as [number | null];
      const fatal = proc.logs.find((r) => r['level'] === 'fatal');
      const seen = kind === 'daemons' ? [code, fatal?.['msg']] : [code, fatal?.['component'], fatal?.['code']];
      const want = kind === 'daemons' ? [2, 'invalid configuration'] : [1, name, 'CONFIG_INVALID'];
      expect([entry, ...seen]).toEqual([entry, ...want]);
    }
  });

  it('rejects an entry that does not exist', async () => {
    await expect(bundleEntries({ root: REPO_ROOT, entries: ['functions/nowhere/index.ts'], outdir: join(dir, 'none'), packages: 'bundled' })).rejects.toThrow(
      /nowhere/,
    );
  });
});

describe('IMAGE_ENV', () => {
  it("is what the Dockerfile's ENV gives every unit, so processes started here run as the image runs them", async () => {
    const env = (await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8')).split('\n').filter((l) => l.startsWith('ENV '));
    expect(env).toHaveLength(1);
    const set = Object.fromEntries(
      (env[0] ?? '')
        .slice(4)
        .trim()
        .split(/\s+/)
        .map((kv) => kv.split('=') as [string, string]),
    );
    expect(set).toEqual({ NODE_ENV: 'production', ...IMAGE_ENV });
  });
});
