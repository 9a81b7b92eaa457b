/**
 * The controller as a child process (`node --import tsx daemons/controller/main.ts`), as the Deployment
 * runs it. Node itself is the child (not the tsx wrapper), so SIGKILL really kills the controller.
 */
import { startFunctionProcess, type FunctionProcess } from '../../../shared/runtime/testing/index.js';
import { getTestEnv } from '../../env/index.js';

export interface ControllerProcess extends FunctionProcess {
  /** POD_NAME, the start of its leader-election identity. */
  readonly name: string;
}

/** Start one replica with the test apiserver's kubeconfig and the given environment. */
export function spawnController(name: string, env: Record<string, string>): ControllerProcess {
  const proc = startFunctionProcess('daemons/controller/main.ts', {
    env: {
      KUBECONFIG: getTestEnv().kubeconfigPath,
      POD_NAME: name,
      HEALTH_PORT: '0',
      CERT_ISSUER: 'off',
      STORAGE_RECONCILERS: 'false',
      ...env,
    },
  });
  return { ...proc, name };
}
