/**
 * The controller as a child process (`node --import tsx daemons/controller/main.ts`), as the Deployment
 * runs it. Node itself is the child (not the tsx wrapper), so SIGKILL really kills the controller.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { getTestEnv } from '../../env/index.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

export interface ControllerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Every log line so far (JSON lines from pino). */
  readonly lines: string[];
  kill(signal: NodeJS.Signals): void;
}

/** Start one replica with the test apiserver's kubeconfig and the given environment. */
export function spawnController(name: string, env: Record<string, string>): ControllerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'daemons', 'controller', 'main.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      KUBECONFIG: getTestEnv().kubeconfigPath,
      POD_NAME: name,
      LOG_LEVEL: 'info',
      HEALTH_PORT: '0',
      CERT_ISSUER: 'off',
      STORAGE_RECONCILERS: 'false',
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
  return { name, child, exited, lines, kill: (signal) => child.kill(signal) };
}
