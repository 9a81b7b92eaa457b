/**
 * Node-local files written atomically: a temp file in the same directory, fsync, rename over the
 * target, fsync of the directory. A reader sees the old content or the new one, never a torn file,
 * also after a crash or power loss in the middle.
 *
 * On a memory filesystem (tmpfs, ramfs: /var/run, /dev/shm, where the DRA daemon's CDI specs and
 * state live) there is nothing to make durable: no fsync, and the few syscalls (mkdir, open, write,
 * close, rename) are made synchronously. They never wait for a disk and take microseconds, while
 * each trip through libuv's thread pool waits for a free thread and then for the event loop, which on
 * a loaded node costs milliseconds per hop, in the path of every NodePrepareResources (as discovery
 * reads sysfs synchronously). The rename alone keeps the write atomic.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, open, rename, rm, statfs } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** File mode of the result (default 0o644). */
  mode?: number;
  /** Mode of the directory when it has to be created (default 0o755). */
  dirMode?: number;
}

/** statfs f_type of tmpfs and ramfs (linux/magic.h). */
const MEMORY_FS_TYPES = new Set([0x01021994, 0x858458f6]);
const memoryDirs = new Map<string, boolean>();

/**
 * Whether `dir` is on tmpfs or ramfs; asked once per directory and process (the answer for a
 * directory that does not exist yet is that of its closest existing parent, not remembered).
 * When statfs fails the answer is "no": the durable path.
 */
export async function onMemoryFs(dir: string): Promise<boolean> {
  const known = memoryDirs.get(dir);
  if (known !== undefined) return known;
  try {
    const memory = MEMORY_FS_TYPES.has((await statfs(dir)).type);
    memoryDirs.set(dir, memory);
    return memory;
  } catch (err: unknown) {
    const parent = dirname(dir);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && parent !== dir) return onMemoryFs(parent);
    return false;
  }
}

/** A leading dot: kubelet's plugin watcher and CDI loaders ignore such files. */
const tempName = (path: string): string => join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);

export async function writeFileAtomic(path: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): Promise<void> {
  const dir = dirname(path);
  if (await onMemoryFs(dir)) {
    writeInMemory(path, data, opts);
    return;
  }
  await mkdir(dir, { recursive: true, mode: opts.dirMode ?? 0o755 });
  const tmp = tempName(path);
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

function writeInMemory(path: string, data: string | Uint8Array, opts: AtomicWriteOptions): void {
  mkdirSync(dirname(path), { recursive: true, mode: opts.dirMode ?? 0o755 });
  const tmp = tempName(path);
  try {
    writeFileSync(tmp, data, { mode: opts.mode ?? 0o644 });
    renameSync(tmp, path);
  } catch (err: unknown) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Remove a file (absent is fine) and make the removal durable. */
export async function removeFileDurable(path: string): Promise<void> {
  if (await onMemoryFs(dirname(path))) {
    rmSync(path, { force: true });
    return;
  }
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
