/**
 * Rewrites knative/crds from the zod schemas: `npx tsx shared/api/generate.ts`. Generated files that no
 * longer correspond to a resource are removed; hand-written files in the directory are left alone.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CRD_DIR, GENERATED_HEADER, renderCrdFiles } from './crds.js';

const files = renderCrdFiles();
mkdirSync(CRD_DIR, { recursive: true });
for (const existing of readdirSync(CRD_DIR)) {
  const path = join(CRD_DIR, existing);
  if (!files.has(existing) && readFileSync(path, 'utf8').includes(GENERATED_HEADER)) rmSync(path);
}
let changed = 0;
for (const [name, text] of files) {
  const path = join(CRD_DIR, name);
  let current: string | undefined;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  writeFileSync(path, text);
  changed++;
}
process.stdout.write(`${files.size} files in ${CRD_DIR}, ${changed} changed\n`);
