/**
 * kube-api-rewriter as a child process (`node --import tsx daemons/api-rewriter/main.ts`), configured
 * by its environment as the sidecar runs it, in front of the test apiserver (or another one given by
 * kubeconfig), with a kubeconfig for clients that points at it.
 */
import { join } from 'node:path';
import { writeRewriterKubeconfig } from '../../../platform/kubevirt.js';
import { startFunctionProcess, type FunctionProcess } from '../../../shared/runtime/testing/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freePort, getTestEnv } from '../../env/index.js';

export interface RewriterProcess extends FunctionProcess {
  readonly proxyUrl: string;
  /** A kubeconfig whose server is the proxy (no credentials: the proxy uses its own). */
  readonly kubeconfigPath: string;
  metrics(): Promise<string>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<unknown>;
}

/** `env`: more of its settings (e.g. the webhook proxy's). */
export async function spawnRewriter(opts: { kubeconfigPath?: string; name: string; env?: Record<string, string> }): Promise<RewriterProcess> {
  const [proxyPort, healthPort] = [await freePort(), await freePort()];
  const env = getTestEnv();
  const proc = startFunctionProcess('daemons/api-rewriter/main.ts', {
    env: {
      KUBECONFIG: opts.kubeconfigPath ?? env.kubeconfigPath,
      PROXY_PORT: String(proxyPort),
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(healthPort),
      METRICS_AUTH: 'none',
      ...opts.env,
    },
  });
  const { child } = proc;
  const proxyUrl = `http://127.0.0.1:${proxyPort}`;
  const kubeconfigPath = join(env.workDir, `${opts.name}-via-rewriter.kubeconfig`);
  await writeRewriterKubeconfig(kubeconfigPath, proxyUrl);
  await waitFor('the rewriter to be ready', async () => {
    if (child.exitCode !== null) throw new Error(`the rewriter exited: ${proc.logs.map((r) => JSON.stringify(r)).join('\n')}`);
    return (await fetch(`http://127.0.0.1:${healthPort}/health/readiness`).catch(() => undefined))?.status === 200;
  });
  return {
    ...proc,
    proxyUrl,
    kubeconfigPath,
    metrics: async () => (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text(),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return proc.exited;
    },
  };
}
