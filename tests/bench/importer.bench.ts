/**
 * Importer throughput on a BENCH_IMPORT_MIB (default 1 GiB) sparse raw image (a `truncate`d file with
 * 4 MiB of random data at five offsets, 20 MiB in all), imported into a file (a PVC path, the shipped
 * defaults: raw at the destination), as MB/s and as a ratio to `cp` of the same file on the same disk
 * (the baseline, 1.00x; GNU cp skips holes). Target: the importer over 0.7x.
 *
 * Rows: `cp` (baseline); the importer with the file source (a PVC mount: checked, then `cp --sparse=always`);
 * the importer with the HTTP source (a loopback server sends every byte, holes included, as any HTTP
 * server does; written back sparse); and, for the HTTP row's sake, `cp --sparse=never`, which also
 * moves every byte, and the bare download of the HTTP row with the bytes thrown away (its ceiling). The
 * HTTP server runs in its own process. Imports run in-process (runImport, the program's own pipeline), so node's start-up
 * is not part of the figure. Rounds are interleaved; the median round of each row is reported.
 *
 * Knobs: BENCH_IMPORT_MIB, BENCH_ROUNDS, BENCH_DIR (default: the OS temp dir).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { runImport } from '../../daemons/importer/run.js';
import { send } from '../../shared/oci/http.js';
import { contextFor } from '../../daemons/importer/test-fixtures.js';
import { interleaved, knobs, medianBy, print, printComparison, timed, type Measurement } from './lib.js';

const settings = knobs(
  z.object({
    BENCH_IMPORT_MIB: env.int(1024, 64).describe('Size of the sparse raw image in MiB'),
    BENCH_ROUNDS: env
      .int(9, 1)
      .describe('Runs per row, interleaved; the median run is reported (the copies of a sparse file take tens of ms: noise needs rounds)'),
    BENCH_DIR: env.string(tmpdir()).describe('Directory (disk) holding the image and the copies'),
  }),
);

const dir = mkdtempSync(join(settings.BENCH_DIR, 'importer-bench-'));
const image = join(dir, 'image.raw');
const dest = join(dir, 'copy.img');
const bytes = settings.BENCH_IMPORT_MIB * 2 ** 20;

function makeSparseImage(): void {
  execFileSync('truncate', ['-s', String(bytes), image]);
  const step = Math.floor(settings.BENCH_IMPORT_MIB / 5);
  for (let i = 0; i < 5; i++) execFileSync('dd', [`if=/dev/urandom`, `of=${image}`, 'bs=1M', 'count=4', `seek=${i * step}`, 'conv=notrunc', 'status=none']);
}

type Variant = 'cp' | 'importer, file source' | 'importer, HTTP source' | 'cp --sparse=never' | 'HTTP download alone (discarded)';
const VARIANTS: readonly Variant[] = ['cp', 'importer, file source', 'importer, HTTP source', 'cp --sparse=never', 'HTTP download alone (discarded)'];

/** The HTTP server in its own process; its URL. */
async function startServer(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'importer-server.ts'), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the benchmark's HTTP server exited (${code})`)));
    createInterface({ input: child.stdout }).once('line', resolve);
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function download(url: string): Promise<void> {
  const res = await send(url);
  for await (const chunk of res.body as AsyncIterable<Buffer>) void chunk;
}

async function main(): Promise<void> {
  makeSparseImage();
  const server = await startServer();
  try {
    const measure = async (variant: Variant): Promise<number> => {
      rmSync(dest, { force: true });
      const { ms } = await timed(async () => {
        if (variant === 'cp') execFileSync('cp', [image, dest]);
        else if (variant === 'cp --sparse=never') execFileSync('cp', ['--sparse=never', image, dest]);
        else if (variant === 'HTTP download alone (discarded)') await download(`${server.url}/image.raw`);
        else {
          const source =
            variant === 'importer, file source'
              ? { IMPORTER_SOURCE: 'file', IMPORTER_ENDPOINT: image }
              : { IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: `${server.url}/image.raw` };
          const result = await runImport(contextFor({ ...source, IMPORTER_DESTINATION_PATH: dest }));
          if (result.virtualSize !== bytes) throw new Error(`${variant}: virtual size ${result.virtualSize}, expected ${bytes}`);
        }
      });
      return ms;
    };
    await measure('importer, file source'); // warm-up: page cache, qemu-img and cp binaries
    const results = await interleaved(VARIANTS, settings.BENCH_ROUNDS, measure);
    const rows: Measurement[] = VARIANTS.map((name, i) => {
      const ms = medianBy(results[i] ?? [], (v) => v);
      return { name, values: { ms, mbps: bytes / 1e6 / (ms / 1000) } };
    });
    print(`image: ${settings.BENCH_IMPORT_MIB} MiB sparse raw (20 MiB of data) in ${dir}; ${settings.BENCH_ROUNDS} interleaved rounds, median shown`);
    printComparison(
      'importer throughput into a file (PVC path)',
      [
        { key: 'ms', label: 'ms', digits: 0 },
        { key: 'mbps', label: 'MB/s', digits: 0, ratio: true },
      ],
      rows,
      'cp',
    );
    const file = rows[1]?.values['mbps'] ?? 0;
    const cp = rows[0]?.values['mbps'] ?? 1;
    print(`target: importer (file source) over 0.7x of cp: ${(file / cp).toFixed(2)}x ${file / cp > 0.7 ? 'MET' : 'NOT MET'}`);
  } finally {
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
