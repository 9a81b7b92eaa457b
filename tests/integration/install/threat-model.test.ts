/**
 * docs/threat-model.md names a test for each threat; this holds the document to the repository: each
 * named file exists and has a test of that title, threats are numbered T1..Tn, each has a
 * protection and a test, every asset is under some threat, and the comparison with the original's
 * model is there. The checker itself is shown broken documents, each problem named.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { REPO_ROOT } from '../../../shared/runtime/testing/index.js';
import { parseThreats, problemsOf, sourceReader } from './threat-model.js';

const DOC = join(REPO_ROOT, 'docs', 'threat-model.md');

describe('the threat model (docs/threat-model.md)', () => {
  let doc = '';
  beforeAll(async () => {
    doc = await readFile(DOC, 'utf8');
  });

  it('names for every threat a protection and tests that exist under those titles', async () => {
    expect(parseThreats(doc).length).toBeGreaterThanOrEqual(10);
    expect(await problemsOf(doc, sourceReader(REPO_ROOT))).toEqual([]);
  });

  it('puts every asset under some threat, and every trust boundary too', () => {
    const headings = parseThreats(doc).map((t) => t.heading);
    const listed = (prefix: string): string[] => [...new Set([...doc.matchAll(new RegExp(`\\*\\*(${prefix}\\d+) `, 'g'))].map((m) => m[1] ?? ''))];
    const covered = (id: string): boolean => headings.some((h) => inRange(h, id));
    expect(listed('A')).toEqual(['A1', 'A2', 'A3', 'A4']);
    expect(listed('B').length).toBeGreaterThanOrEqual(6);
    expect([...listed('A'), ...listed('B')].filter((id) => !covered(id))).toEqual([]);
  });

  it("compares with the original's model on the audit input and USB/IP", () => {
    const comparison = doc.slice(doc.indexOf("## Compared with the original's model"));
    expect(comparison).toContain('virtualization-threat-model.md');
    expect(comparison).toMatch(/\*\*Audit input\.\*\*/);
    expect(comparison).toMatch(/\*\*USB\/IP\.\*\*/);
  });

  it('names each problem of a broken document: numbering, no protection, no test, a missing file, a missing title', async () => {
    const files: Record<string, string> = { 'a.test.ts': "it('holds a real title', () => {});\nconst note = 'x';" };
    const reader = (path: string): Promise<string | undefined> => Promise.resolve(files[path]);
    const broken = [
      '### T1 — fine',
      'Protection: yes.',
      '- a.test.ts › holds a real title',
      '### T3 — skipped a number, no protection and no test',
      '### T4 — names what is not there',
      'Protection: none really.',
      '- missing.test.ts › anything',
      '- a.test.ts › holds a real',
      '- a.test.ts › x',
    ].join('\n');
    expect(await problemsOf(broken, reader)).toEqual([
      'T3: expected T2 here (threats are numbered T1..Tn in order)',
      'T3: no "Protection:" paragraph',
      'T3: names no test (lines `- path/to/file.test.ts › test title`)',
      'T4: expected T3 here (threats are numbered T1..Tn in order)',
      'T4: missing.test.ts does not exist',
      'T4: a.test.ts has no test titled "holds a real"',
      'T4: a.test.ts has no test titled "x"',
    ]);
    expect(await problemsOf('# nothing here', reader)).toEqual(['no threat found (headings `### T<n> — title`)']);
    expect(await sourceReader(REPO_ROOT)('tests/integration/install/no-such.test.ts')).toBeUndefined();
  });
});

/** Whether the list of assets and boundaries closing a heading ("(A1, B2)", "(A1–A4, B1)") includes `id`. */
function inRange(heading: string, id: string): boolean {
  const letter = id[0] ?? '';
  const n = Number(id.slice(1));
  const list = /\(([^)]*)\)$/.exec(heading)?.[1] ?? '';
  return [...list.matchAll(new RegExp(`${letter}(\\d+)(?:–${letter}(\\d+))?`, 'g'))].some((m) => {
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    return n >= from && n <= to;
  });
}
