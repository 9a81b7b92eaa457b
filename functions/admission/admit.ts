/**
 * From a decoded AdmissionRequest to a Decision: the request must be for the validator's kind, the
 * object (and old object) must match the resource schema, then every check runs. Nothing here throws
 * for any input; unexpected failures inside checks come back in `failures` for the caller to log.
 */
import type { AdmissionInput, Decision } from './decision.js';
import { allow, deny, joinPath } from './decision.js';
import type { RuleContext } from './lookups.js';
import type { AdmissionRequest } from './review.js';
import { runChecks, type CheckFailure } from './rules/check.js';
import type { Parsed, Validator } from './rules/validator.js';

export interface Outcome {
  readonly decision: Decision;
  readonly failures: readonly CheckFailure[];
}

export async function validate<T>(validator: Validator<T>, request: AdmissionRequest, ctx: RuleContext): Promise<Outcome> {
  const input = admissionInput(validator, request);
  if (!input.ok) return { decision: deny(input.problems), failures: [] };
  if (input.value === undefined) return { decision: allow(), failures: [] };
  const { findings, failures } = await runChecks(validator.checks, input.value, ctx);
  return { decision: findings.decision(), failures };
}

/**
 * The typed input for a validator, or the reasons there is none. `value` is undefined for requests
 * without an object to judge (DELETE, CONNECT).
 */
export function admissionInput<T>(
  validator: Pick<Validator<T>, 'group' | 'kind' | 'versions' | 'parse'>,
  request: AdmissionRequest,
): Parsed<AdmissionInput<T> | undefined> {
  const { group, version, kind } = request.kind;
  const wanted = validator.versions === undefined || validator.versions.includes(version);
  if (group !== validator.group || kind !== validator.kind || !wanted) {
    const expected = `${validator.group}/${validator.versions?.join('|') ?? '*'} ${validator.kind}`;
    return { ok: false, problems: [{ path: 'kind', message: `this webhook admits ${expected}, not ${group}/${version} ${kind}` }] };
  }
  if (request.operation === 'DELETE' || request.operation === 'CONNECT') return { ok: true, value: undefined };
  const object = parseAt('', validator.parse, request.object);
  const oldObject = request.operation === 'UPDATE' ? parseAt('oldObject', validator.parse, request.oldObject) : undefined;
  const problems = [...(object.ok ? [] : object.problems), ...(oldObject === undefined || oldObject.ok ? [] : oldObject.problems)];
  if (!object.ok || (oldObject !== undefined && !oldObject.ok)) return { ok: false, problems };
  return {
    ok: true,
    value: {
      operation: request.operation,
      name: request.name,
      namespace: request.namespace,
      object: object.value,
      oldObject: oldObject?.ok === true ? oldObject.value : undefined,
      userInfo: request.userInfo,
      subResource: request.subResource,
    },
  };
}

function parseAt<T>(prefix: string, parse: (raw: unknown) => Parsed<T>, raw: Record<string, unknown> | null): Parsed<T> {
  if (raw === null) return { ok: false, problems: [{ path: prefix === '' ? 'object' : prefix, message: 'is required' }] };
  const parsed = parse(raw);
  if (parsed.ok || prefix === '') return parsed;
  return { ok: false, problems: parsed.problems.map((p) => ({ path: joinPath(prefix, p.path), message: p.message })) };
}
