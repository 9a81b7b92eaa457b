import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Whether `moduleUrl` is the process's entry module. Node gives the entry's real path in
 * `import.meta.url`, so a path through a symlink (a worktree whose node_modules, where the platform's
 * bundles live, links to another checkout) is compared by its real path too.
 */
export function isEntry(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  if (moduleUrl === pathToFileURL(entry).href) return true;
  try {
    return moduleUrl === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}
