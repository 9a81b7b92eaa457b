import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { binaryHeaders, listeningPort, REPO_ROOT, send, startNodeProcess, type FunctionProcess } from '../runtime/testing/index.js';
import { IMAGE_ENV } from './image-env.js';
import { bundleEntries } from './index.js';

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

  it('makes one self-contained file that serves the function as its own entry', async () => {
    const files = await bundleEntries({ root: REPO_ROOT, entries: ['functions/sample-echo/index.ts'], outdir: join(dir, 'out'), packages: 'bundled' });
    const main = join(dir, 'app', 'main.mjs');
    await mkdir(join(dir, 'app'));
    await copyFile(files.get('functions/sample-echo/index.ts') ?? '', main);
    let proc: FunctionProcess | undefined;
    try {
      proc = startNodeProcess([main], { env: { PORT: '0', HOST: '127.0.0.1', METRICS_AUTH: 'none', NODE_PATH: '' } });
      const url = `http://127.0.0.1:${await listeningPort(proc)}`;
      const echo = await send(url, { method: 'POST', headers: binaryHeaders({ id: 'b1', type: 'bundle' }), body: '{"n":1}' });
      expect([echo.status, echo.headers['ce-type'], echo.json()]).toEqual([200, 'bundle.echo', { n: 1 }]);
    } finally {
      proc?.kill();
    }
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

  it("runs every daemon's main.ts bundled alone as main.mjs: its runDaemonIfMain sees itself as the entry", async () => {
    // The image runs daemons this way too (Dockerfile). A configuration error is the entry's own answer
    // (a fatal line, exit 2) and needs no apiserver: every module loaded and the entry ran.
    const entries = ['api-rewriter', 'controller', 'dra', 'route-forge'].map((d) => `daemons/${d}/main.ts`);
    const files = await bundleEntries({ root: REPO_ROOT, entries, outdir: join(dir, 'daemons'), packages: 'bundled' });
    for (const entry of entries) {
      const app = join(dir, 'daemon-app', entry.split('/')[1] ?? '');
      await mkdir(app, { recursive: true });
      const main = join(app, 'main.mjs');
      await copyFile(files.get(entry) ?? '', main);
      const proc = startNodeProcess([main], { env: { LOG_LEVEL: 'no-such-level', NODE_ENV: 'production', NODE_PATH: '' } });
      // 'close' (not 'exit'): every line of stdout has been read by then.
      const [code] = (await once(proc.child, 'close')) as [number | null];
      const fatal = proc.logs.find((r) => r['level'] === 'fatal');
      expect([entry, code, fatal?.['msg']]).toEqual([entry, 2, 'invalid configuration']);
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
