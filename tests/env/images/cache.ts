import { homedir } from 'node:os';
import { join } from 'node:path';

/** The test cache the shell scripts use too (VIRT_TESTENV_CACHE, else ~/.cache/virt-testenv). */
export function cacheRoot(): string {
  return process.env['VIRT_TESTENV_CACHE'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'virt-testenv');
}
