/** The golden cases in testdata/golden: `<case>.input.json` (an audit line) and `<case>.expected.json` (its record line). */
import { readdirSync, readFileSync } from 'node:fs';

const DIR = new URL('../testdata/golden/', import.meta.url);

export const GOLDEN_CASES: readonly string[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.input.json'))
  .map((f) => f.slice(0, -'.input.json'.length))
  .sort();

/** The case's file content, trimmed: `input` is the audit line, `expected` the record line. */
export function golden(name: string, part: 'input' | 'expected'): string {
  return readFileSync(new URL(`${name}.${part}.json`, DIR), 'utf8').trim();
}

/** Every golden input as a parsed audit event. */
export function goldenEvents(): Array<Record<string, unknown>> {
  return GOLDEN_CASES.map((name) => JSON.parse(golden(name, 'input')) as Record<string, unknown>);
}
