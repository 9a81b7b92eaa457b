import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const FIXTURE = join(import.meta.dirname, 'testdata', 'daemon.ts');
const TSX = join(import.meta.dirname, '..', '..', 'node_modules', 'tsx', 'dist', 'loader.mjs');

interface Run {
  readonly code: number | null;
  readonly out: string;
}

/** Runs the fixture daemon with `env` (no in-cluster variables); sends SIGTERM once it printed its start line. */
function runDaemon(env: NodeJS.ProcessEnv, entry = FIXTURE): Promise<Run> {
  const clean = { ...process.env };
  delete clean['KUBECONFIG'];
  delete clean['KUBERNETES_SERVICE_HOST'];
  delete clean['KUBERNETES_SERVICE_PORT'];
  const child = spawn(process.execPath, ['--import', TSX, entry], { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let termSent = false;
  const take = (chunk: Buffer): void => {
    out += chunk.toString('utf8');
    // Once: a second SIGTERM, sent for a later chunk of output, would find the default handler again.
    if (!termSent && out.includes('"msg":"started"')) termSent = child.kill('SIGTERM');
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe('runDaemonIfMain', () => {
  it('exits 2 with "cannot read the kubeconfig" naming the file when KUBECONFIG does not exist', async () => {
    const missing = join(tmpdir(), 'no-such-dir', 'kubeconfig');
    const run = await runDaemon({ KUBECONFIG: missing });
    expect(run.code).toBe(2);
    expect(run.out).toContain('cannot read the kubeconfig');
    expect(run.out).toContain(missing);
    expect(run.out).not.toContain('"msg":"started"');
  });

  it('exits 2 with "cannot read the kubeconfig" when there is neither a KUBECONFIG nor a pod service account', async () => {
    const run = await runDaemon({});
    expect(run.code).toBe(2);
    expect(run.out).toContain('cannot read the kubeconfig');
    expect(run.out).toContain('in-cluster');
  });

  it('runs when its entry is reached through a symlink (a bundle under a linked node_modules)', async () => {
    const link = join(mkdtempSync(join(tmpdir(), 'daemon-main-')), 'daemon.ts');
    symlinkSync(FIXTURE, link);
    const run = await runDaemon({ KUBECONFIG: join(tmpdir(), 'no-such-dir', 'kubeconfig') }, link);
    // It ran (and refused the kubeconfig) instead of exiting 0 without a word.
    expect(run.code).toBe(2);
    expect(run.out).toContain('cannot read the kubeconfig');
  });

  it('exits 2 when the KUBECONFIG file is not a kubeconfig', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'daemon-main-')), 'config');
    writeFileSync(file, 'clusters: 42\n');
    const run = await runDaemon({ KUBECONFIG: file });
    expect(run.code).toBe(2);
    expect(run.out).toContain('cannot read the kubeconfig');
  });

  it('starts with a readable kubeconfig (no server needed) and exits 0 on SIGTERM', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'daemon-main-')), 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
        '',
      ].join('\n'),
    );
    const run = await runDaemon({ KUBECONFIG: file });
    expect(run.out).toContain('"msg":"started"');
    expect(run.code).toBe(0);
  });
});
