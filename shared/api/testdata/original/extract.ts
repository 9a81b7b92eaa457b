/**
 * Writes original-crds.json, the facts of the original module's published CRDs that the comparison
 * test (shared/api/original.test.ts) reads: `npx tsx shared/api/testdata/original/extract.ts <dir>`,
 * where <dir> holds CRD files of deckhouse/virtualization `crds/` (a checkout, or copies reduced to their
 * schemas). A file's first line may name its commit (`... @<40 hex digits>`); otherwise pass
 * `--commit <sha>`. Only facts are kept (paths, types, patterns, enums, defaults, required): no
 * descriptions or other text of the original.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { specFacts, type FactsByPath } from './flatten.js';

export const ORIGINAL_FACTS = fileURLToPath(new URL('./original-crds.json', import.meta.url));

export interface OriginalFacts {
  source: string;
  /** file -> commit it was read at */
  files: Record<string, string>;
  /** kind -> version -> path -> facts */
  kinds: Record<string, Record<string, FactsByPath>>;
}

/** JSON with one line per property path, so a review sees each fact on its own line. */
function render(facts: OriginalFacts): string {
  const kinds = Object.entries(facts.kinds).map(([kind, versions]) => {
    const vs = Object.entries(versions).map(([version, paths]) => {
      const lines = Object.entries(paths).map(([path, f]) => `    ${JSON.stringify(path)}: ${JSON.stringify(f)}`);
      return `   ${JSON.stringify(version)}: {\n${lines.join(',\n')}\n   }`;
    });
    return `  ${JSON.stringify(kind)}: {\n${vs.join(',\n')}\n  }`;
  });
  const head = `{\n "source": ${JSON.stringify(facts.source)},\n "files": ${JSON.stringify(facts.files)},\n "kinds": {\n`;
  return `${head}${kinds.join(',\n')}\n }\n}\n`;
}

function main(argv: readonly string[]): void {
  const dir = argv[0];
  if (dir === undefined) throw new Error('usage: extract.ts <dir with original CRD files> [--commit <sha>]');
  const fallback = argv.indexOf('--commit') >= 0 ? argv[argv.indexOf('--commit') + 1] : undefined;
  const out: OriginalFacts = { source: 'github.com/deckhouse/virtualization crds/', files: {}, kinds: {} };
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    const text = readFileSync(join(dir, file), 'utf8');
    const commit = /@([0-9a-f]{40})/.exec(text.split('\n', 1)[0] ?? '')?.[1] ?? fallback;
    if (commit === undefined) throw new Error(`${file}: no commit on its first line and no --commit`);
    const crd = load(text) as Record<string, unknown>;
    const kind = String(((crd['spec'] as Record<string, unknown>)['names'] as Record<string, unknown>)['kind']);
    out.files[file] = commit;
    out.kinds[kind] = specFacts(crd);
  }
  writeFileSync(ORIGINAL_FACTS, render(out));
  process.stdout.write(`${Object.keys(out.kinds).length} kinds written to ${ORIGINAL_FACTS}\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
