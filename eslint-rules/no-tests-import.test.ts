/**
 * The lint rule that keeps tests/ out of shipped code (eslint-rules/no-tests-import.js): every way a
 * shipped file can name a module under tests/ is reported, and what is not under tests/ is not.
 */
import { describe, expect, it } from '@jest/globals';
import { Linter, type Rule } from 'eslint';
import { join, resolve } from 'node:path';
import tseslint from 'typescript-eslint';

const root = resolve(import.meta.dirname, '..');
const rulePath = join(root, 'eslint-rules/no-tests-import.js');
const { noTestsImport } = (await import(rulePath)) as { noTestsImport: Rule.RuleModule };

function lint(code: string, file: string): string[] {
  const linter = new Linter({ configType: 'flat' });
  const config: Linter.Config[] = [
    {
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser },
      plugins: { local: { rules: { 'no-tests-import': noTestsImport } } },
      rules: { 'local/no-tests-import': 'error' },
    },
  ];
  return linter.verify(code, config, { filename: join(root, file) }).map((m) => m.message);
}

describe('no-tests-import', () => {
  it.each([
    ["import { freePort } from '../../tests/env/ports.js';", 'shared/oci/x.ts'],
    ["import type { LoggedProcess } from '../../tests/env/process.js';", 'functions/admission/x.ts'],
    ["export { freePort } from '../../tests/env/ports.js';", 'daemons/dra/x.ts'],
    ["export * from '../tests/env/ports.js';", 'proto/x.ts'],
    ["const m = await import('../../../tests/env/ports.js'); export default m;", 'shared/kube/deep/x.ts'],
    ["type P = typeof import('../../tests/env/process.js'); export type { P };", 'shared/log/x.ts'],
    ["import '../../tests';", 'shared/log/x.ts'],
  ])('reports %s in %s', (code, file) => {
    const messages = lint(code, file);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/shipped code imports '.*tests.*' \(under tests\//);
  });

  it.each([
    ["import { waitFor } from '../testing/wait.js';", 'shared/oci/x.ts'],
    ["import { z } from 'zod';", 'shared/oci/x.ts'],
    // A folder named like tests/ that is not the repository's tests/.
    ["import { a } from './tests/a.js';", 'shared/oci/x.ts'],
    ["import { a } from '../../tests-data/a.js';", 'shared/oci/x.ts'],
  ])('accepts %s in %s', (code, file) => {
    expect(lint(code, file)).toEqual([]);
  });
});
