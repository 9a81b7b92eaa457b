import { rm } from 'node:fs/promises';
import { killRegisteredExtras } from './state.js';

export default async function globalTeardown(): Promise<void> {
  const cp = globalThis.__virtControlPlane;
  if (cp === undefined) return;
  await killRegisteredExtras(cp.state.workDir);
  await cp.stop();
  if (process.env['VIRT_TESTENV_KEEP'] !== '1') await rm(cp.state.workDir, { recursive: true, force: true });
}
