import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onMemoryFs, removeFileDurable, writeFileAtomic } from './atomic-file.js';

// /dev/shm is a tmpfs on Linux (the memory path); the disk path needs a dir that is not one.
let shm: string;
let disk: string;

beforeEach(async () => {
  shm = await mkdtemp('/dev/shm/atomic-file-');
  disk = await mkdtemp(join(tmpdir(), 'atomic-file-'));
});
afterEach(async () => {
  await rm(shm, { recursive: true, force: true });
  await rm(disk, { recursive: true, force: true });
});

describe('onMemoryFs', () => {
  it('says tmpfs for /dev/shm, also for a directory below it that does not exist yet', async () => {
    expect(await onMemoryFs(shm)).toBe(true);
    expect(await onMemoryFs(join(shm, 'not', 'yet'))).toBe(true);
  });
});

describe.each([
  ['a memory filesystem (synchronous, no fsync)', (): string => shm],
  ['the temp dir (fsynced unless it is a tmpfs too)', (): string => disk],
])('writeFileAtomic on %s', (_, root) => {
  it('creates the directory with its mode and the file with its mode and content, leaving no temp file', async () => {
    const path = join(root(), 'state', 'checkpoint.json');
    await writeFileAtomic(path, 'first\n', { mode: 0o600, dirMode: 0o700 });
    await writeFileAtomic(path, 'second\n', { mode: 0o600, dirMode: 0o700 });
    expect(await readFile(path, 'utf8')).toBe('second\n');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(root(), 'state'))).mode & 0o777).toBe(0o700);
    expect(await readdir(join(root(), 'state'))).toEqual(['checkpoint.json']);
  });

  it('fails without a trace when the target cannot be replaced (a directory there), the old content untouched', async () => {
    const path = join(root(), 'target');
    await mkdir(path);
    await writeFile(join(path, 'inside'), 'old');
    await expect(writeFileAtomic(path, 'new')).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(await readdir(root())).toEqual(['target']);
    expect(await readFile(join(path, 'inside'), 'utf8')).toBe('old');
  });

  it('removes a file, and an absent one is fine', async () => {
    const path = join(root(), 'spec.json');
    await writeFileAtomic(path, '{}');
    await removeFileDurable(path);
    await removeFileDurable(path);
    expect(await readdir(root())).toEqual([]);
  });
});
