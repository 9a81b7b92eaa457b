/**
 * AdmissionReview v1 codec: checks the envelope the apiserver sends and builds the answer. No rule
 * lives here. A broken envelope is a client error (the caller answers 400); anything wrong with the
 * object inside a good envelope is a denial, answered in a normal AdmissionReview.
 */
import { z } from 'zod';
import { formatPath } from '../../shared/config/index.js';
import type { FieldProblem } from '../../shared/errors/index.js';
import type { Decision, Operation, UserInfo } from './decision.js';
import type { JsonPatchOp } from './patch.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

const groupVersionKind = z.looseObject({ group: z.string(), version: z.string(), kind: z.string() });
const maybeObject = z.union([z.record(z.string(), z.unknown()), z.null()]).optional();

const RequestSchema = z.looseObject({
  uid: z.string().min(1, 'must be a non-empty string'),
  kind: groupVersionKind,
  resource: z.looseObject({ group: z.string(), version: z.string(), resource: z.string() }).optional(),
  subResource: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  operation: z.enum(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']),
  userInfo: z.looseObject({ username: z.string().optional(), groups: z.array(z.string()).optional() }).optional(),
  object: maybeObject,
  oldObject: maybeObject,
  dryRun: z.boolean().optional(),
});

const ReviewSchema = z.looseObject({
  apiVersion: z.literal(ADMISSION_API_VERSION, { error: `must be ${ADMISSION_API_VERSION}` }),
  kind: z.literal(ADMISSION_KIND, { error: `must be ${ADMISSION_KIND}` }),
  request: RequestSchema,
});

/** The request of a well-formed AdmissionReview. */
export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly subResource: string | undefined;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly operation: Operation;
  readonly userInfo: UserInfo;
  /** The object as sent; null for DELETE. */
  readonly object: Record<string, unknown> | null;
  readonly oldObject: Record<string, unknown> | null;
  readonly dryRun: boolean;
}

export type Decoded = { ok: true; request: AdmissionRequest } | { ok: false; problems: FieldProblem[] };

/** Check the envelope; every problem is listed (`request.uid: ...`). */
export function decodeReview(body: unknown): Decoded {
  const result = ReviewSchema.safeParse(body);
  if (!result.success) {
    return { ok: false, problems: result.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message })) };
  }
  const r = result.data.request;
  return {
    ok: true,
    request: {
      uid: r.uid,
      kind: { group: r.kind.group, version: r.kind.version, kind: r.kind.kind },
      subResource: r.subResource === '' ? undefined : r.subResource,
      name: r.name ?? '',
      namespace: r.namespace === '' ? undefined : r.namespace,
      operation: r.operation,
      userInfo: { username: r.userInfo?.username ?? '', groups: r.userInfo?.groups ?? [] },
      object: r.object ?? null,
      oldObject: r.oldObject ?? null,
      dryRun: r.dryRun ?? false,
    },
  };
}

/** The text of a broken envelope, for the 400 answer. */
export function describeProblems(problems: readonly FieldProblem[]): string {
  return problems.map((p) => (p.path === '' ? p.message : `${p.path}: ${p.message}`)).join('; ');
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: {
    code: number;
    reason: string;
    message: string;
    details: { causes: Array<{ type: string; field: string; message: string }> };
  };
  warnings?: string[];
  patchType?: 'JSONPatch';
  patch?: string;
}

export interface AdmissionReviewOut {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  response: AdmissionResponse;
}

/** The answer for `uid`: every violation in `status.message` (with its path), warnings, an optional patch. */
export function encodeReview(uid: string, decision: Decision, patch: readonly JsonPatchOp[] = []): AdmissionReviewOut {
  const response: AdmissionResponse = { uid, allowed: decision.allowed };
  if (!decision.allowed) {
    response.status = {
      code: 403,
      reason: 'Forbidden',
      message: denialMessage(decision.violations),
      details: {
        causes: decision.violations.map((v) => ({ type: 'FieldValueInvalid', field: v.path, message: v.message })),
      },
    };
  }
  if (decision.warnings.length > 0) response.warnings = decision.warnings.map(printable);
  if (decision.allowed && patch.length > 0) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
  }
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response };
}

/** `spec.x: message; spec.y: message` (a denial without violations still says why). */
export function denialMessage(violations: readonly FieldProblem[]): string {
  if (violations.length === 0) return 'denied';
  return describeProblems(violations);
}

/** The apiserver drops warnings with control characters; replace them. */
function printable(text: string): string {
  return text.replace(/[\p{Cc}]/gu, ' ');
}
