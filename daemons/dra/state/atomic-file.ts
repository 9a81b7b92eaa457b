/**
 * Node-local files written atomically: a temp file in the same directory, fsync, rename over the
 * target, fsync of the directory. A reader sees the old content or the new one, never a torn file,
 * also after a crash or power loss in the middle.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** File mode of the result (default 0o644). */
  mode?: number;
  /** Mode of the directory when it has to be created (default 0o755). */
  dirMode?: number;
}

export async function writeFileAtomic(path: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: opts.dirMode ?? 0o755 });
  // A leading dot: kubelet's plugin watcher and CDI loaders ignore such files.
  const tmp = join(dir, `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  const file = await open(tmp, 'w', opts.mode ?? 0o644);
  try {
    await file.writeFile(data);
    await file.sync();
    await file.close();
    await rename(tmp, path);
  } catch (err: unknown) {
    await file.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dir);
}

/** Remove a file (absent is fine) and make the removal durable. */
export async function removeFileDurable(path: string): Promise<void> {
  await rm(path, { force: true });
  await syncDir(dirname(path)).catch(() => undefined);
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
