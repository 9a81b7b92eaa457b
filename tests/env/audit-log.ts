/**
 * The test apiserver's audit log as a reader needs it: the apiserver rotates `audit.log` at 100 MB
 * (its log writer's default size when `--audit-log-maxsize` is unset) into `audit-<time>.log`, and a
 * long suite fills several, so a reader of `audit.log` alone loses the lines written before a rotation.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Whole lines of the current and rotated audit files written to at or after `sinceMs`, oldest file
 * first. A reader passes the time it started to watch, so it reads only the files it may care about.
 */
export async function readAuditLog(auditLogPath: string, sinceMs: number): Promise<string[]> {
  const dir = dirname(auditLogPath);
  const stem = basename(auditLogPath, '.log');
  const names = (await readdir(dir)).filter((n) => n === `${stem}.log` || (n.startsWith(`${stem}-`) && n.endsWith('.log')));
  const files = (
    await Promise.all(
      names.map(async (n) => {
        const s = await stat(join(dir, n)).catch(() => undefined);
        return s === undefined ? [] : [{ path: join(dir, n), mtimeMs: s.mtimeMs }];
      }),
    )
  ).flat();
  const recent = files.filter((f) => f.mtimeMs >= sinceMs).sort((a, b) => a.mtimeMs - b.mtimeMs);
  const lines: string[] = [];
  for (const f of recent) {
    const text = await readFile(f.path, 'utf8').catch(() => '');
    // The last line of the current file may still be being written: only whole lines count.
    for (const line of text.slice(0, text.lastIndexOf('\n') + 1).split('\n')) if (line !== '') lines.push(line);
  }
  return lines;
}
