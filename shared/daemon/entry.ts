import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Whether `moduleUrl` is the process's entry module, symlinks followed on both sides: Node resolves
 * the entry's real path, so an entry reached through a link (a bundle under a worktree's
 * `node_modules` linked to another checkout's) would otherwise never count as the entry.
 */
export function isProcessEntry(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
