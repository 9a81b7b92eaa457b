/**
 * Reads docs/threat-model.md: its threats (`### T<n> — title`), each with its protection and the
 * tests it names (`- path/to/file.test.ts › test title`), and checks every named test against the
 * repository: the file exists and holds a test of exactly that title (a quoted string in the source).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface NamedTest {
  readonly file: string;
  readonly title: string;
}

export interface Threat {
  readonly id: string;
  readonly heading: string;
  readonly text: string;
  readonly tests: readonly NamedTest[];
}

const HEADING = /^### (T\d+) — (.+)$/gm;
const TEST_LINE = /^- (\S+\.test\.ts) › (.+)$/gm;

/** The threats of the document, in order. */
export function parseThreats(markdown: string): Threat[] {
  const headings = [...markdown.matchAll(HEADING)];
  return headings.map((h, i) => {
    const end = headings[i + 1]?.index ?? nextSection(markdown, h.index);
    const text = markdown.slice(h.index, end);
    const tests = [...text.matchAll(TEST_LINE)].map((m) => ({ file: m[1] ?? '', title: (m[2] ?? '').trim() }));
    return { id: h[1] ?? '', heading: h[2] ?? '', text, tests };
  });
}

/** Where the section after a threat starts (the next `## `), or the end. */
function nextSection(markdown: string, from: number): number {
  const next = markdown.indexOf('\n## ', from);
  return next === -1 ? markdown.length : next;
}

/**
 * Every problem of the document, each naming its threat and what is wrong: numbering not T1..Tn,
 * a threat without a protection or a test, a named file that does not exist or has no test of
 * that title. `readSource` gives a file's text below `root`, or undefined when there is none.
 */
export async function problemsOf(markdown: string, readSource: (path: string) => Promise<string | undefined>): Promise<string[]> {
  const threats = parseThreats(markdown);
  const problems: string[] = [];
  if (threats.length === 0) problems.push('no threat found (headings `### T<n> — title`)');
  threats.forEach((t, i) => {
    if (t.id !== `T${i + 1}`) problems.push(`${t.id}: expected T${i + 1} here (threats are numbered T1..Tn in order)`);
    if (!/^Protection: /m.test(t.text)) problems.push(`${t.id}: no "Protection:" paragraph`);
    if (t.tests.length === 0) problems.push(`${t.id}: names no test (lines \`- path/to/file.test.ts › test title\`)`);
  });
  for (const t of threats) {
    for (const named of t.tests) {
      const source = await readSource(named.file);
      if (source === undefined) {
        problems.push(`${t.id}: ${named.file} does not exist`);
        continue;
      }
      if (!holdsTitle(source, named.title)) problems.push(`${t.id}: ${named.file} has no test titled "${named.title}"`);
    }
  }
  return problems;
}

/**
 * The title as the first argument of a test: `it('title'`, `test("title"`, or after `it.each(...)(`,
 * in any of the three quotes (a quote of the same kind inside escaped).
 */
function holdsTitle(source: string, title: string): boolean {
  return ["'", '"', '`'].some((q) => {
    const literal = escapeRegExp(`${q}${title.replaceAll(q, `\\${q}`)}${q}`);
    return new RegExp(`(?:\\b(?:it|test)(?:\\.(?:only|skip|concurrent))?\\(|\\)\\()\\s*${literal}`).test(source);
  });
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A reader of files below `root`. */
export function sourceReader(root: string): (path: string) => Promise<string | undefined> {
  return async (path) => {
    if (path.includes('..')) return undefined;
    return readFile(join(root, path), 'utf8').catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    });
  };
}
