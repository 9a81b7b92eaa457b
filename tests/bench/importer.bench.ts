/**
 * Importer throughput on a BENCH_IMPORT_MIB (default 1 GiB) sparse raw image (a `truncate`d file with
 * 4 MiB of random data at five offsets, 20 MiB in all), imported into a file (a PVC path, the shipped
 * defaults: raw at the destination), as MB/s and as a ratio to a baseline measured in the same run.
 *
 * Two groups, each interleaved round by round, the median round of each row reported:
 * 1. The target: the importer with the file source (a PVC mount: checked, then `cp --sparse=always`)
 *    against `cp` of the same file on the same disk (the baseline, 1.00x; GNU cp skips holes). Target:
 *    over 0.7x. Both take ~10 ms, so this group runs alone (nothing else's garbage collection, page
 *    cache churn or 1 GiB writes land in it), alternates which of the two goes first each round, and
 *    runs many rounds (they are cheap).
 * 2. Every byte moved: the importer with the HTTP source (a loopback server sends every byte, holes
 *    included, as any HTTP server does; written back sparse) against `cp --sparse=never`, which also
 *    moves every byte, and the bare download with the bytes thrown away (the HTTP row's ceiling). The
 *    HTTP server runs in its own process.
 * Imports run in-process (runImport, the program's own pipeline); node's start-up and the program's
 * (config, logger, metrics registry: the ImportContext) are not part of the figure, as they are not
 * for cp's run.
 *
 * Knobs: BENCH_IMPORT_MIB, BENCH_ROUNDS (group 1), BENCH_HTTP_ROUNDS (group 2), BENCH_DIR (default: the
 * OS temp dir).
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
import { knobs, medianBy, print, printComparison, timed, type Measurement } from './lib.js';

const settings = knobs(
  z.object({
    BENCH_IMPORT_MIB: env.int(1024, 64).describe('Size of the sparse raw image in MiB'),
    BENCH_ROUNDS: env
      .int(31, 1)
      .describe('Runs per row of the target group, interleaved; the median run is reported (a copy of the sparse file takes ~10 ms: noise needs rounds)'),
    BENCH_HTTP_ROUNDS: env.int(5, 1).describe('Runs per row of the every-byte group (seconds each)'),
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
const TARGET: readonly Variant[] = ['cp', 'importer, file source'];
const EVERY_BYTE: readonly Variant[] = ['cp --sparse=never', 'importer, HTTP source', 'HTTP download alone (discarded)'];

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

/** Rows of `variants` (the first is the baseline) over `rounds` interleaved rounds, median of each; `alternate` reverses the order every other round. */
async function group(variants: readonly Variant[], rounds: number, alternate: boolean, measure: (v: Variant) => Promise<number>): Promise<Measurement[]> {
  const results = new Map<Variant, number[]>(variants.map((v) => [v, []]));
  for (let round = 0; round < rounds; round++) {
    const order = alternate && round % 2 === 1 ? [...variants].reverse() : variants;
    for (const v of order) results.get(v)?.push(await measure(v));
  }
  return variants.map((name) => {
    const ms = medianBy(results.get(name) ?? [], (v) => v);
    return { name, values: { ms, mbps: bytes / 1e6 / (ms / 1000) } };
  });
}

const COLUMNS = [
  { key: 'ms', label: 'ms', digits: 0 },
  { key: 'mbps', label: 'MB/s', digits: 0, ratio: true },
];

async function main(): Promise<void> {
  makeSparseImage();
  const server = await startServer();
  try {
    const measure = async (variant: Variant): Promise<number> => {
      rmSync(dest, { force: true });
      const source =
        variant === 'importer, file source'
          ? { IMPORTER_SOURCE: 'file', IMPORTER_ENDPOINT: image }
          : { IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: `${server.url}/image.raw` };
      const ctx = contextFor({ ...source, IMPORTER_DESTINATION_PATH: dest });
      const { ms } = await timed(async () => {
        if (variant === 'cp') execFileSync('cp', [image, dest]);
        else if (variant === 'cp --sparse=never') execFileSync('cp', ['--sparse=never', image, dest]);
        else if (variant === 'HTTP download alone (discarded)') await download(`${server.url}/image.raw`);
        else {
          const result = await runImport(ctx);
          if (result.virtualSize !== bytes) throw new Error(`${variant}: virtual size ${result.virtualSize}, expected ${bytes}`);
        }
      });
      return ms;
    };
    await measure('importer, file source'); // warm-up: page cache, qemu-img and cp binaries, JIT
    await measure('cp');
    const target = await group(TARGET, settings.BENCH_ROUNDS, true, measure);
    const everyByte = await group(EVERY_BYTE, settings.BENCH_HTTP_ROUNDS, false, measure);
    print(
      `image: ${settings.BENCH_IMPORT_MIB} MiB sparse raw (20 MiB of data) in ${dir}; median of ${settings.BENCH_ROUNDS} / ${settings.BENCH_HTTP_ROUNDS} interleaved rounds`,
    );
    printComparison('importer throughput into a file (PVC path), the target', COLUMNS, target, 'cp');
    printComparison('every byte moved (the HTTP source sends the holes too)', COLUMNS, everyByte, 'cp --sparse=never');
    const file = target[1]?.values['mbps'] ?? 0;
    const cp = target[0]?.values['mbps'] ?? 1;
    print(`target: importer (file source) over 0.7x of cp: ${(file / cp).toFixed(2)}x ${file / cp > 0.7 ? 'MET' : 'NOT MET'}`);
  } finally {
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
