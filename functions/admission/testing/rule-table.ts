/**
 * Table-driven rule tests: every row names one rule with a conforming and a violating scenario; the
 * conforming one must pass every check of the validator, the violating one must fail (or warn) at the
 * given path.
 */
import { describe, expect, it } from '@jest/globals';
import { validate } from '../admit.js';
import type { Decision, Operation } from '../decision.js';
import type { ClusterFacts } from '../lookups.js';
import type { Validator } from '../rules/validator.js';
import { FakeLookups, context, type World } from './fake-lookups.js';
import { request } from './objects.js';

export interface Scenario {
  readonly object: unknown;
  readonly old?: unknown;
  readonly operation?: Operation;
  readonly world?: (w: World) => void;
  readonly facts?: Partial<ClusterFacts>;
  readonly username?: string;
}

export type Expectation = { readonly deny: string; readonly message: RegExp } | { readonly warn: RegExp };

export interface RuleCase {
  readonly rule: string;
  readonly good: Scenario;
  readonly bad: Scenario;
  readonly expect: Expectation;
}

export async function decideScenario<T>(validator: Validator<T>, baseWorld: () => World, s: Scenario): Promise<Decision> {
  const world = baseWorld();
  s.world?.(world);
  const req = request(s.object, { oldObject: s.old, operation: s.operation, username: s.username });
  const { decision, failures } = await validate(validator, req, context(new FakeLookups(world), s.facts));
  expect(failures).toEqual([]);
  return decision;
}

export function ruleTable<T>(validator: Validator<T>, baseWorld: () => World, cases: readonly RuleCase[]): void {
  describe.each(cases)('$rule', ({ good, bad, expect: expectation }) => {
    it('admits the conforming object without a violation', async () => {
      const decision = await decideScenario(validator, baseWorld, good);
      expect(decision.violations).toEqual([]);
      if ('warn' in expectation) expect(decision.warnings.filter((w) => expectation.warn.test(w))).toEqual([]);
    });

    const outcome = 'deny' in expectation ? `denies the violating object at ${expectation.deny}` : 'admits the violating object with a warning';
    it(outcome, async () => {
      const decision = await decideScenario(validator, baseWorld, bad);
      if ('deny' in expectation) {
        expect(decision.allowed).toBe(false);
        expect(decision.violations).toContainEqual({ path: expectation.deny, message: expect.stringMatching(expectation.message) });
      } else {
        expect(decision.violations).toEqual([]);
        expect(decision.warnings).toContainEqual(expect.stringMatching(expectation.warn));
      }
    });
  });
}
