/**
 * vm-route-forge as a child process (`node --import tsx daemons/route-forge/main.ts`), configured by
 * its environment as the DaemonSet runs it, programming a test network namespace (NETNS) with the
 * test apiserver's kubeconfig. Its /metrics is open (METRICS_AUTH=none) on a port picked here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort, getTestEnv } from '../../env/index.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

export interface RouteForgeProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Every log line so far (JSON lines from pino). */
  readonly lines: string[];
  /** The text of /metrics. */
  metrics(): Promise<string>;
  /** GET /health/readiness: true on 200. */
  ready(): Promise<boolean>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<number | string>;
}

export async function spawnRouteForge(env: Record<string, string>): Promise<RouteForgeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'daemons', 'route-forge', 'main.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      KUBECONFIG: getTestEnv().kubeconfigPath,
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(port),
      METRICS_AUTH: 'none',
      MODULE_CONFIG_WATCH: 'false',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer): void => {
    lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''),
    );
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const get = (path: string): Promise<Response> => fetch(`http://127.0.0.1:${port}${path}`);
  return {
    child,
    port,
    exited,
    lines,
    metrics: async () => (await get('/metrics')).text(),
    ready: async () => (await get('/health/readiness').catch(() => undefined))?.status === 200,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
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
