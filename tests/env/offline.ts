/**
 * One of the test environment's build scripts run as on a machine that has nothing: an empty cache
 * (VIRT_TESTENV_CACHE), an empty Go module cache and no Go module proxy. The tests of each script use
 * it to check that a missing part stops the script with the step, what is missing and how to get it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface OfflineRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The empty cache the script was given (removed by now; its path is what the script names). */
  readonly cache: string;
}

/** Runs `bash script` offline with empty caches, then removes them (Go leaves its module cache read-only). */
export function runOffline(script: string): OfflineRun {
  const root = mkdtempSync(join(tmpdir(), 'offline-build-'));
  const cache = join(root, 'cache');
  const modcache = join(root, 'mod');
  mkdirSync(cache);
  mkdirSync(modcache);
  try {
    const run = spawnSync('bash', [script], {
      encoding: 'utf8',
      env: { ...process.env, VIRT_TESTENV_CACHE: cache, GOMODCACHE: modcache, GOPROXY: 'off', GOFLAGS: '' },
    });
    if (run.error !== undefined) throw run.error;
    return { status: run.status, stdout: run.stdout, stderr: run.stderr, cache };
  } finally {
    spawnSync('chmod', ['-R', 'u+w', root]);
    rmSync(root, { recursive: true, force: true });
  }
}
