/**
 * vm-route-forge as a child process (`node --import tsx daemons/route-forge/main.ts`), configured by
 * its environment as the DaemonSet runs it, programming a test network namespace (NETNS) with the
 * test apiserver's kubeconfig. Its /metrics is open (METRICS_AUTH=none) on a port picked here.
 */
import { startFunctionProcess, type FunctionProcess } from '../../../shared/runtime/testing/index.js';
import { freePort, getTestEnv } from '../../env/index.js';

export interface RouteForgeProcess extends FunctionProcess {
  readonly port: number;
  /** The text of /metrics. */
  metrics(): Promise<string>;
  /** GET /health/readiness: true on 200. */
  ready(): Promise<boolean>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<unknown>;
}

export async function spawnRouteForge(env: Record<string, string>): Promise<RouteForgeProcess> {
  const port = await freePort();
  const proc = startFunctionProcess('daemons/route-forge/main.ts', {
    env: {
      KUBECONFIG: getTestEnv().kubeconfigPath,
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(port),
      METRICS_AUTH: 'none',
      MODULE_CONFIG_WATCH: 'false',
      ...env,
    },
  });
  const get = (path: string): Promise<Response> => fetch(`http://127.0.0.1:${port}${path}`);
  return {
    ...proc,
    port,
    metrics: async () => (await get('/metrics')).text(),
    ready: async () => (await get('/health/readiness').catch(() => undefined))?.status === 200,
    stop: async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
      return proc.exited;
    },
  };
}

/** The value of one series in Prometheus text (`name{a="b"} 3`); undefined when absent. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const have = (m[2] ?? '')
      .slice(1, -1)
      .split(',')
      .filter((s) => s !== '');
    if (wanted.every((w) => have.includes(w)) && have.length === wanted.length) return Number(m[3]);
  }
  return undefined;
}
