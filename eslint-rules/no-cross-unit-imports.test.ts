/**
 * The lint rule that keeps each unit in its room (eslint-rules/no-cross-unit-imports.js): an import
 * from one unit's folder into another's, or from shared/ into a unit, is reported; imports of the
 * unit's own folder, of shared/ and of packages are not. The repository's eslint config applies it
 * (and no-tests-import) to every unit and shared/.
 */
import { describe, expect, it } from '@jest/globals';
import { ESLint, Linter, type Rule } from 'eslint';
import { join, resolve } from 'node:path';
import tseslint from 'typescript-eslint';

const root = resolve(import.meta.dirname, '..');
const { noCrossUnitImports } = (await import(join(root, 'eslint-rules/no-cross-unit-imports.js'))) as { noCrossUnitImports: Rule.RuleModule };

function lint(code: string, file: string): string[] {
  const linter = new Linter({ configType: 'flat' });
  const config: Linter.Config[] = [
    {
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser },
      plugins: { rooms: { rules: { 'no-cross-unit-imports': noCrossUnitImports } } },
      rules: { 'rooms/no-cross-unit-imports': 'error' },
    },
  ];
  return linter.verify(code, config, { filename: join(root, file) }).map((m) => m.message);
}

describe('no-cross-unit-imports', () => {
  it.each([
    ["import { cidrs } from '../controller/kube/cidrs.js';", 'daemons/route-forge/daemon.ts', 'daemons/route-forge', 'daemons/controller'],
    ["import { x } from '../../../daemons/controller/x.js';", 'functions/audit/deep/x.ts', 'functions/audit', 'daemons/controller'],
    ["export { x } from '../../functions/admission/x.js';", 'daemons/dra/x.ts', 'daemons/dra', 'functions/admission'],
    ["export * from '../../platform/platform.js';", 'daemons/controller/x.ts', 'daemons/controller', 'platform'],
    ["const m = await import('../../daemons/api-rewriter/x.js'); export default m;", 'shared/kube/x.ts', 'shared', 'daemons/api-rewriter'],
    ["import { y } from '../daemons/controller/y.js';", 'platform/x.ts', 'platform', 'daemons/controller'],
  ])('reports %s in %s', (code, file, from, to) => {
    const messages = lint(code, file);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(`${from} imports ${to} (`);
    expect(messages[0]).toContain('move the shared contract to shared/');
  });

  it.each([
    ["import { x } from './engine/x.js';", 'daemons/controller/x.ts'],
    ["import { objectKey } from '../../../shared/kube/index.js';", 'daemons/controller/reconcilers/x.ts'],
    ["import { z } from 'zod';", 'functions/audit/x.ts'],
    ["import { a } from '../config/a.js';", 'shared/kube/x.ts'],
    // tests/ and knative/ are not rooms: they may import any unit.
    ["import { startController } from '../../../daemons/controller/controller.js';", 'tests/integration/controller/x.ts'],
  ])('accepts %s in %s', (code, file) => {
    expect(lint(code, file)).toEqual([]);
  });

  it('is on, with no-tests-import, in the repository config for shared/ and every unit', async () => {
    const eslint = new ESLint({ cwd: root });
    const rulesOf = async (file: string): Promise<Partial<Linter.RulesRecord>> =>
      ((await eslint.calculateConfigForFile(join(root, file))) as { rules?: Linter.RulesRecord } | undefined)?.rules ?? {};
    for (const file of ['shared/kube/x.ts', 'functions/audit/x.ts', 'daemons/controller/x.ts']) {
      const rules = await rulesOf(file);
      expect([file, rules['rooms/no-cross-unit-imports']]).toEqual([file, [2]]);
      expect([file, rules['local/no-tests-import']]).toEqual([file, [2]]);
    }
    const platform = await rulesOf('platform/x.ts');
    expect(platform['rooms/no-cross-unit-imports']).toEqual([2]);
  });
});
