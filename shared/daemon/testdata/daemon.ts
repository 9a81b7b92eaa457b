// A daemon entry for main.test.ts: runDaemonIfMain with the KUBECONFIG of its environment.
import { runDaemonIfMain } from '../main.js';

runDaemonIfMain(
  import.meta.url,
  'test-daemon',
  () => ({ KUBECONFIG: process.env['KUBECONFIG'], LOG_LEVEL: 'info' as const }),
  async ({ signal }) => {
    process.stdout.write('{"msg":"started"}\n');
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return 0;
  },
);
