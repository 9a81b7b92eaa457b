// Prints jest's totals from its --json results as one plain closing line: "N passed, N failed".
// A test file that failed to run at all (syntax error, failing hook) counts as one failure.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.jest-results.json';
let results;
try {
  results = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  process.stdout.write(`no jest results in ${file}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
const brokenFiles = (results.testResults ?? []).filter((r) => r.status === 'failed' && (r.assertionResults ?? []).every((a) => a.status !== 'failed'));
for (const r of brokenFiles) process.stdout.write(`test file failed to run: ${r.name}\n`);
const failed = results.numFailedTests + brokenFiles.length;
const skipped = (results.numPendingTests ?? 0) + (results.numTodoTests ?? 0);
process.stdout.write(`${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(results.success && failed === 0 ? 0 : 1);
