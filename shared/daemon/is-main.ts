import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Whether the module at `moduleUrl` is the process entry (`entry`, default `process.argv[1]`).
 * Compared as real paths: Node gives an ES module entry its real path as `import.meta.url` while
 * `process.argv[1]` keeps the path as typed, so through a symlink (a worktree whose node_modules, and
 * with it the platform's bundles, is a link) a plain comparison says no and the entry silently does
 * nothing and exits 0.
 */
export function isMainModule(moduleUrl: string, entry: string | undefined = process.argv[1]): boolean {
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
