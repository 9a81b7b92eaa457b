import { mkdtemp } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBinaries } from './binaries.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { installCrds } from './crds.js';
import { STATE_ENV } from './state.js';

declare global {
  var __virtControlPlane: ControlPlane | undefined;
}

/** jest globalSetup: one real control plane for the whole run; workers find it through STATE_ENV. */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const binDir = await ensureBinaries();
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const workDir = await mkdtemp(join(base, 'virt-testenv-'));
  const cp = await startControlPlane(binDir, workDir);
  globalThis.__virtControlPlane = cp;
  process.env[STATE_ENV] = join(workDir, 'state.json');
  await installCrds(cp.state);
  process.stderr.write(`\n[testenv] control plane up in ${Date.now() - started} ms at ${cp.state.server} (${workDir})\n`);
}
