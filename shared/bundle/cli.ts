/**
 * `node dist/shared/bundle/cli.js OUTDIR ENTRY...`: bundle function and daemon entries with their
 * npm packages inlined, one self-contained unit each: `OUTDIR/<entry>.cjs` (the image's start-up file, see
 * Dockerfile) with its code and code cache beside it.
 * Run from the repository root, where the sources are.
 */
import { bundleEntries } from './index.js';

const [outdir, ...entries] = process.argv.slice(2);
if (outdir === undefined || entries.length === 0) {
  process.stderr.write('usage: node dist/shared/bundle/cli.js OUTDIR ENTRY...\n');
  process.exit(2);
}
const files = await bundleEntries({ root: process.cwd(), entries, outdir, packages: 'bundled' });
for (const [entry, file] of files) process.stdout.write(`${entry} -> ${file}\n`);
