/**
 * kube-api-rewriter as a child process (`node --import tsx daemons/api-rewriter/main.ts`), configured
 * by its environment as the sidecar runs it, in front of the test apiserver (or another one given by
 * kubeconfig), with a kubeconfig for clients that points at it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '../../../shared/testing/wait.js';
import { freePort, getTestEnv } from '../../env/index.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

export interface RewriterProcess {
  readonly child: ChildProcess;
  readonly proxyUrl: string;
  /** A kubeconfig whose server is the proxy (no credentials: the proxy uses its own). */
  readonly kubeconfigPath: string;
  readonly lines: string[];
  metrics(): Promise<string>;
  stop(): Promise<number | string>;
}

export async function spawnRewriter(opts: { kubeconfigPath?: string; name: string }): Promise<RewriterProcess> {
  const [proxyPort, healthPort] = [await freePort(), await freePort()];
  const env = getTestEnv();
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'daemons', 'api-rewriter', 'main.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      KUBECONFIG: opts.kubeconfigPath ?? env.kubeconfigPath,
      PROXY_PORT: String(proxyPort),
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(healthPort),
      METRICS_AUTH: 'none',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer): void =>
    void lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''),
    );
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const proxyUrl = `http://127.0.0.1:${proxyPort}`;
  const kubeconfigPath = join(env.workDir, `${opts.name}-via-rewriter.kubeconfig`);
  await writeFile(
    kubeconfigPath,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'rewriter', cluster: { server: proxyUrl } }],
      users: [{ name: 'none', user: {} }],
      contexts: [{ name: 'rewriter', context: { cluster: 'rewriter', user: 'none' } }],
      'current-context': 'rewriter',
    }),
  );
  await waitFor('the rewriter to be ready', async () => {
    if (child.exitCode !== null) throw new Error(`the rewriter exited: ${lines.join('\n')}`);
    return (await fetch(`http://127.0.0.1:${healthPort}/health/readiness`).catch(() => undefined))?.status === 200;
  });
  return {
    child,
    proxyUrl,
    kubeconfigPath,
    lines,
    metrics: async () => (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text(),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
