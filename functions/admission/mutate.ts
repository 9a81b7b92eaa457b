/**
 * From a decoded AdmissionRequest to a defaulting answer: the defaulter changes a copy of the raw
 * object, and the JSON Patch is the difference between the two. A failed lookup denies with what
 * could not be read; any other throw is reported as a failure, never escapes.
 */
import { errorMessage } from '../../shared/errors/index.js';
import { allow, deny, type Decision } from './decision.js';
import { addCreateFinalizer } from './defaulting/finalizer.js';
import type { Defaulted } from './defaulting/virtualmachine.js';
import { LookupError, type RuleContext } from './lookups.js';
import { diff, type JsonPatchOp } from './patch.js';
import type { AdmissionRequest } from './review.js';
import type { CheckFailure } from './rules/check.js';

export interface Defaulter {
  readonly group: string;
  readonly kind: string;
  readonly apply: (raw: Record<string, unknown>, ctx: RuleContext) => Promise<Defaulted>;
  /** The controller's cleanup finalizer, added on CREATE (defaulting/finalizer.ts). */
  readonly createFinalizer?: string;
}

export interface MutationOutcome {
  readonly decision: Decision;
  readonly patch: readonly JsonPatchOp[];
  readonly failures: readonly CheckFailure[];
}

export async function mutate(defaulter: Defaulter, request: AdmissionRequest, ctx: RuleContext): Promise<MutationOutcome> {
  const { group, version, kind } = request.kind;
  if (group !== defaulter.group || kind !== defaulter.kind) {
    const message = `this webhook defaults ${defaulter.group} ${defaulter.kind}, not ${group}/${version} ${kind}`;
    return { decision: deny([{ path: 'kind', message }]), patch: [], failures: [] };
  }
  if (request.object === null || request.operation === 'DELETE' || request.operation === 'CONNECT') {
    return { decision: allow(), patch: [], failures: [] };
  }
  try {
    const { changed, findings } = await defaulter.apply(request.object, ctx);
    if (request.operation === 'CREATE' && defaulter.createFinalizer !== undefined) addCreateFinalizer(changed, defaulter.createFinalizer);
    const decision = findings.decision();
    return { decision, patch: decision.allowed ? diff(request.object, changed) : [], failures: [] };
  } catch (err: unknown) {
    const what = `defaulting ${kind}`;
    if (err instanceof LookupError) return { decision: deny([{ path: '', message: `cannot finish ${what}: ${err.message}` }]), patch: [], failures: [] };
    const decision = deny([{ path: '', message: `internal error while ${what}: ${errorMessage(err)}` }]);
    return { decision, patch: [], failures: [{ check: what, error: err }] };
  }
}
