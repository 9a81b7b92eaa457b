import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatHeapSummary, heapSnapshotArgs, summarizeHeapSnapshot, takeHeapSnapshot } from './heap-snapshot.js';

describe('heap snapshot summary', () => {
  const dirs: string[] = [];
  afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('finds, in a real snapshot of a process taken on its signal, the objects it keeps by constructor and a value it keeps a copy of per object', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'heap-snapshot-'));
    dirs.push(dir);
    const script = join(dir, 'keeper.mjs');
    // 3,000 objects, each with its own copy of one long value (made at run time, so not one shared literal).
    await writeFile(
      script,
      `class CachedThing { constructor(v) { this.value = v; } }
       const kept = [];
       for (let i = 0; i < 3000; i++) kept.push(new CachedThing(['marker-value', 'x'.repeat(200)].join(':') + String(i % 1)));
       globalThis.kept = kept;
       console.log('ready');
       setInterval(() => undefined, 1000);`,
    );
    const child = spawn(process.execPath, [...heapSnapshotArgs(dir), script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (s: string) => (s.includes('ready') ? resolve() : undefined));
        child.once('exit', (code) => reject(new Error(`the keeper exited (${String(code)}) before it was ready`)));
      });
      const file = await takeHeapSnapshot(child.pid ?? 0, dir);
      const summary = summarizeHeapSnapshot(file, 1000);
      expect(summary.byKind.find((k) => k.what === 'object CachedThing')?.count).toBe(3000);
      const marker = summary.repeatedStrings.find((s) => s.what.startsWith('"marker-value:xxx'));
      expect(marker?.count).toBeGreaterThanOrEqual(3000);
      expect(marker?.bytes).toBeGreaterThanOrEqual(3000 * 200);
      expect(summary.totalBytes).toBeGreaterThan(3000 * 200);
      expect(formatHeapSummary('keeper', summary)).toMatch(/object CachedThing/);
    } finally {
      child.kill();
    }
  }, 120_000);

  it('says a file that is not a heap snapshot is not one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'heap-snapshot-'));
    dirs.push(dir);
    const file = join(dir, 'broken.heapsnapshot');
    await writeFile(file, '{"nodes":[1,2,3]}');
    expect(() => summarizeHeapSnapshot(file)).toThrow(/not a heap snapshot: no "snapshot":/);
  });
});
