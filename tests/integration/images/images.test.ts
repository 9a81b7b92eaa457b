/**
 * Every unit's image built with the real Dockerfile (legacy builder: `# syntax=` would ask a registry)
 * through an isolated dockerd, then started: functions with the test control plane (a flattened admin
 * kubeconfig) become ready on /health/readiness (subresources' readiness needs the apiserver's
 * requestheader config), daemons with no cluster (a kubeconfig of a server that is not there: a daemon
 * on the host network must not act on the host, e.g. route-forge's routes) print their start line, and
 * both stop cleanly on SIGTERM; a daemon without any kubeconfig says so and exits 2. Also: a shipped file that imports tests/ breaks the build (tests/ is not in the
 * build context). Skipped, with the reason, only where a dockerd cannot run at all.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { z } from 'zod';
import { ensureBaseImages } from '../../env/images/base-images.js';
import { dockerdUnavailable, startDockerd, type Dockerd } from '../../env/images/dockerd.js';
import { kubectl } from '../../env/index.js';
import { freePort } from '../../env/ports.js';
import { imageUnits, REPO, type ImageUnit } from './units.js';
import { waitFor } from '../../../shared/testing/wait.js';

const unavailable = dockerdUnavailable();
if (unavailable !== undefined) process.stderr.write(`[images] skipped: ${unavailable}\n`);
const describeWithDocker = unavailable === undefined ? describe : describe.skip;

// A cold build, after waiting up to 40 min for another checkout's run to release the engine (dockerd.ts).
const BUILD_TIMEOUT_MS = 90 * 60_000;
const START_TIMEOUT_MS = 120_000;
const UNITS = imageUnits();

const HookJob = z.object({
  spec: z.object({ template: z.object({ spec: z.object({ containers: z.array(z.object({ args: z.array(z.string()).optional() })) }) }) }),
});

/** A kubeconfig for an apiserver that is not there: clients are made, every request is refused. */
const NO_CLUSTER_KUBECONFIG = [
  'apiVersion: v1',
  'kind: Config',
  'clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]',
  'users: [{name: none, user: {token: none}}]',
  'contexts: [{name: none, context: {cluster: none, user: none}}]',
  'current-context: none',
  '',
].join('\n');

describe('image units', () => {
  it('come from skaffold.yaml: every function and daemon of the install, each with its UNIT', () => {
    expect(UNITS.map((u) => u.unit).sort()).toEqual([
      'daemons/api-rewriter',
      'daemons/controller',
      'daemons/dra',
      'daemons/route-forge',
      'functions/admission',
      'functions/audit',
      'functions/pre-delete',
      'functions/subresources',
    ]);
    expect(UNITS.find((u) => u.unit === 'daemons/dra')?.runAsUser).toBe(0);
    expect(UNITS.find((u) => u.unit === 'daemons/controller')?.runAsUser).toBeUndefined();
    // A sidecar only (knative/kubevirt/): the user of the pod it runs in, virt-operator's.
    expect(UNITS.find((u) => u.unit === 'daemons/api-rewriter')?.runAsUser).toBeUndefined();
  });

  it('refuses a skaffold.yaml artifact without a UNIT build arg, naming the image', () => {
    const broken = [
      'apiVersion: skaffold/v4beta11',
      'kind: Config',
      'metadata: {name: virtualization}',
      'build:',
      '  artifacts:',
      '    - image: dev.local/virtualization-x',
      '      docker: {dockerfile: Dockerfile, buildArgs: {NODE_OPTIONS: ""}}',
    ].join('\n');
    expect(() => imageUnits(broken)).toThrow('dev.local/virtualization-x has no build arg UNIT');
  });

  it('refuses a skaffold.yaml without the virtualization config', () => {
    expect(() => imageUnits('apiVersion: skaffold/v4beta11\nkind: Config\nmetadata: {name: other}\n')).toThrow(
      'no build artifacts in the virtualization config',
    );
  });
});

describeWithDocker('images', () => {
  let dockerd: Dockerd;
  let kubeDir: string;
  const sizes = new Map<string, number>();
  const buildMs = new Map<string, number>();
  const containers: string[] = [];

  const build = (context: string, unit: ImageUnit, tag: string): ReturnType<Dockerd['docker']> =>
    dockerd.docker(['build', '--network=host', ...Object.entries(unit.buildArgs).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]), '-t', tag, context], {
      env: { DOCKER_BUILDKIT: '0' },
    });

  beforeAll(async () => {
    dockerd = await startDockerd();
    const nodeBin = execFileSync('bash', [join(REPO, 'tests/env/node-binary.sh')], { encoding: 'utf8' }).trim();
    let started = Date.now();
    await ensureBaseImages(dockerd, nodeBin);
    process.stderr.write(`[images] base images ready in ${Date.now() - started} ms\n`);
    // One after the other: the first builds the shared stage (npm ci, tsc, bundles), the rest reuse it.
    for (const unit of UNITS) {
      started = Date.now();
      const r = await build(REPO, unit, unit.image);
      if (r.code !== 0) throw new Error(`docker build of ${unit.unit} failed:\n${(r.stdout + r.stderr).slice(-4000)}`);
      buildMs.set(unit.unit, Date.now() - started);
      const size = await dockerd.docker(['image', 'inspect', '--format', '{{.Size}}', unit.image]);
      sizes.set(unit.unit, Number(size.stdout.trim()));
    }
    const lines = UNITS.map((u) => `  ${u.image}: ${((sizes.get(u.unit) ?? 0) / 1e6).toFixed(0)} MB, built in ${buildMs.get(u.unit)} ms`);
    process.stderr.write(`[images] built:\n${lines.join('\n')}\n`);
    kubeDir = mkdtempSync(join(tmpdir(), 'virt-images-kube-'));
    chmodSync(kubeDir, 0o755);
    writeFileSync(join(kubeDir, 'none'), NO_CLUSTER_KUBECONFIG, { mode: 0o644 });
    // The files it names are the test run's own (0600): the image's nonroot user reads embedded copies.
    const flat = await kubectl(['config', 'view', '--raw', '--flatten']);
    if (flat.code !== 0) throw new Error(`kubectl config view --flatten failed: ${flat.stderr}`);
    writeFileSync(join(kubeDir, 'test-env'), flat.stdout, { mode: 0o644 });
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    if (dockerd === undefined) return;
    if (containers.length > 0) await dockerd.docker(['rm', '-f', ...containers]);
    await dockerd.stop();
    if (kubeDir !== undefined) rmSync(kubeDir, { recursive: true, force: true });
  }, 120_000);

  async function state(name: string): Promise<{ running: boolean; exitCode: number }> {
    const r = await dockerd.docker(['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', name]);
    const [running, code] = r.stdout.trim().split(' ');
    return { running: running === 'true', exitCode: Number(code) };
  }

  const logs = async (name: string): Promise<string> => {
    const r = await dockerd.docker(['logs', name]);
    return r.stdout + r.stderr;
  };

  /** Starts `image` detached on the host network; returns the container name. */
  async function run(unit: ImageUnit, env: Record<string, string>, kubeconfig: 'none' | 'test-env' | undefined): Promise<string> {
    const name = `virt-images-${unit.unit.replace('/', '-')}-${process.pid}-${containers.length}`;
    containers.push(name);
    const args = ['run', '-d', '--network=host', '--name', name];
    if (unit.runAsUser !== undefined) args.push('--user', String(unit.runAsUser));
    if (kubeconfig !== undefined) args.push('-v', `${kubeDir}:/kube:ro`, '-e', `KUBECONFIG=/kube/${kubeconfig}`);
    for (const [k, v] of Object.entries(env)) args.push('-e', `${k}=${v}`);
    const r = await dockerd.docker([...args, unit.image]);
    if (r.code !== 0) throw new Error(`docker run ${unit.image} failed: ${r.stderr}`);
    return name;
  }

  const exitedEarly = (name: string) => async (): Promise<string | undefined> =>
    (await state(name)).running ? undefined : `exited early:\n${(await logs(name)).slice(-3000)}`;

  /** SIGTERM (docker stop, SIGKILL only after 60 s); returns the exit code. */
  async function stop(name: string): Promise<number> {
    await dockerd.docker(['stop', '-t', '60', name], { timeoutMs: 90_000 });
    return (await state(name)).exitCode;
  }

  async function waitAsync(what: string, probe: () => Promise<boolean>, abort: () => Promise<string | undefined>): Promise<void> {
    let reason: string | undefined;
    await waitFor(
      what,
      async () => {
        reason = await abort();
        return reason === undefined && (await probe());
      },
      { timeoutMs: START_TIMEOUT_MS, intervalMs: 250, abortIf: () => reason },
    );
  }

  const functions = UNITS.filter((u) => u.kind === 'function');
  const daemons = UNITS.filter((u) => u.kind === 'daemon');

  it.each(functions.map((u) => [u.unit, u] as const))(
    '%s becomes ready on /health/readiness with the test control plane and exits 0 on SIGTERM',
    async (_name, unit) => {
      const port = await freePort();
      const name = await run(unit, { PORT: String(port) }, 'test-env');
      const readiness = `http://127.0.0.1:${port}/health/readiness`;
      await waitAsync(`${unit.unit} readiness`, async () => (await fetch(readiness)).status === 200, exitedEarly(name));
      expect(await stop(name)).toBe(0);
      expect(await logs(name)).toContain('"msg":"exiting"');
    },
    START_TIMEOUT_MS * 2,
  );

  it.each(daemons.map((u) => [u.unit, u] as const))(
    '%s prints its start line with no cluster and exits 0 on SIGTERM',
    async (_name, unit) => {
      // PROXY_PORT: the api-rewriter's proxy, on a free port too (host network); its start line is its own ("kube-api-rewriter started: ...").
      const name = await run(unit, { HEALTH_PORT: '0', PROXY_PORT: '0', NODE_NAME: 'image-test' }, 'none');
      await waitAsync(`${unit.unit} start line`, async () => /"msg":"(kube-api-rewriter )?started/.test(await logs(name)), exitedEarly(name));
      expect(await stop(name)).toBe(0);
    },
    START_TIMEOUT_MS * 2,
  );

  it.each(daemons.map((u) => [u.unit, u] as const))(
    '%s without any kubeconfig says it cannot read one and exits 2',
    async (_name, unit) => {
      const name = await run(unit, { HEALTH_PORT: '0', NODE_NAME: 'image-test' }, undefined);
      await waitAsync(
        `${unit.unit} exit`,
        async () => !(await state(name)).running,
        () => Promise.resolve(undefined),
      );
      expect((await state(name)).exitCode).toBe(2);
      expect(await logs(name)).toContain('cannot read the kubeconfig');
    },
    START_TIMEOUT_MS * 2,
  );

  it('runs the pre-delete hook Job entry from the tsc output and the pruned production dependencies', async () => {
    const job = loadAll(readFileSync(join(REPO, 'knative/hooks/pre-delete/job.yaml'), 'utf8')).map((d) => HookJob.parse(d));
    const args = job[0]?.spec.template.spec.containers[0]?.args ?? [];
    expect(args).toEqual(['dist/functions/pre-delete/job.js']);
    const unit = UNITS.find((u) => u.unit === 'functions/pre-delete');
    if (unit === undefined) throw new Error('skaffold.yaml builds no functions/pre-delete image');
    // A bad WAIT_TIMEOUT: the Job's whole module graph loads, then its config check answers (exit 2), and
    // nothing is cleaned up in the test control plane.
    const name = `virt-images-pre-delete-job-${process.pid}`;
    containers.push(name);
    const r = await dockerd.docker(['run', '--name', name, '--network=host', '-e', 'WAIT_TIMEOUT=soon', unit.image, ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toMatch(/"level":"fatal".*WAIT_TIMEOUT/);
  });

  it(
    'fails to build when a shipped file imports tests/ (not in the build context)',
    async () => {
      const context = mkdtempSync(join(tmpdir(), 'virt-images-context-'));
      try {
        // The build context as .dockerignore lets it in, plus tests/env (which it keeps out) and one bad import.
        for (const entry of ['Dockerfile', '.dockerignore', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
          cpSync(join(REPO, entry), join(context, entry));
        }
        for (const dir of ['shared', 'functions', 'daemons', 'proto/gen', 'tests/env']) {
          cpSync(join(REPO, dir), join(context, dir), { recursive: true });
        }
        writeFileSync(join(context, 'shared', 'imports-tests.ts'), "import { freePort } from '../tests/env/ports.js';\n\nexport const port = freePort;\n");
        const unit = UNITS[0];
        if (unit === undefined) throw new Error('no units');
        const r = await build(context, unit, 'virt-images/imports-tests:broken');
        expect(r.code).not.toBe(0);
        expect(r.stdout + r.stderr).toMatch(/shared\/imports-tests\.ts.*TS2307.*tests\/env\/ports\.js/);
      } finally {
        rmSync(context, { recursive: true, force: true });
      }
    },
    BUILD_TIMEOUT_MS,
  );
});
