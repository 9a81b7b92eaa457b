/**
 * AdmissionReviews on the webhook side (apiserver → proxy → KubeVirt's webhook server): the request is
 * restored to original names (resource, kind, object, oldObject) and the JSON Patch of the response is
 * renamed back before it returns to the apiserver. Validating responses carry no patch and pass as-is.
 */
import { isRecord, type Renamer } from './names.js';
import { rewriteObject } from './objects.js';
import { rewritePatch } from './patch.js';

type Obj = Record<string, unknown>;

export class AdmissionReviewError extends Error {
  override readonly name = 'AdmissionReviewError';
}

/** Restore `review.request` in place; returns the original kind it is about (for the response patch). */
export function restoreAdmissionRequest(r: Renamer, review: unknown): string | undefined {
  if (!isRecord(review) || review.kind !== 'AdmissionReview' || !isRecord(review.request)) {
    throw new AdmissionReviewError('the body is not an AdmissionReview with a request');
  }
  const req = review.request;
  const kind = isRecord(req.kind) ? req.kind : undefined;
  if (kind === undefined || typeof kind.group !== 'string' || r.renamedGroupRule(kind.group) === undefined) return undefined;
  for (const field of ['resource', 'requestResource']) {
    const gvr = req[field];
    if (isRecord(gvr) && typeof gvr.group === 'string' && typeof gvr.resource === 'string') {
      gvr.resource = r.resourceName(gvr.group, gvr.resource, 'restore');
      gvr.group = r.group(gvr.group, 'restore');
    }
  }
  for (const field of ['kind', 'requestKind']) {
    const gvk = req[field];
    if (isRecord(gvk) && typeof gvk.group === 'string' && typeof gvk.kind === 'string') {
      gvk.kind = r.kind(gvk.group, gvk.kind, 'restore');
      gvk.group = r.group(gvk.group, 'restore');
    }
  }
  // A subresource review (status, scale) holds an object of another kind: left as it is.
  if (typeof req.subResource !== 'string' || req.subResource === '') {
    rewriteObject(r, req.object, 'restore');
    rewriteObject(r, req.oldObject, 'restore');
  }
  return typeof kind.kind === 'string' ? kind.kind : undefined;
}

/** Rename the JSON Patch (base64) of `review.response` in place. */
export function renameAdmissionResponse(r: Renamer, review: unknown, originalKind: string | undefined): void {
  if (!isRecord(review) || !isRecord(review.response)) throw new AdmissionReviewError('the body is not an AdmissionReview with a response');
  const res: Obj = review.response;
  if (res.patchType !== 'JSONPatch' || typeof res.patch !== 'string') return;
  let ops: unknown;
  try {
    ops = JSON.parse(Buffer.from(res.patch, 'base64').toString('utf8'));
  } catch (err: unknown) {
    throw new AdmissionReviewError('the response patch is not base64 JSON', { cause: err });
  }
  res.patch = Buffer.from(JSON.stringify(rewritePatch(r, 'json', ops, 'rename', originalKind))).toString('base64');
}
