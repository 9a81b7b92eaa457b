/**
 * Transport-side glue for one webhook call: envelope decoding, the webhook's decision, the encoded
 * AdmissionReview. A broken envelope yields a message for a 400; nothing here throws.
 */
import { errorMessage } from '../../shared/errors/index.js';
import { deny } from './decision.js';
import type { RuleContext } from './lookups.js';
import { decodeReview, describeProblems, encodeReview, type AdmissionReviewOut } from './review.js';
import type { AdmissionAnswer, Webhook } from './webhooks.js';

export type Answered =
  { readonly ok: true; readonly review: AdmissionReviewOut; readonly answer: AdmissionAnswer } | { readonly ok: false; readonly message: string };

export async function answerReview(webhook: Webhook, body: unknown, ctx: RuleContext): Promise<Answered> {
  const decoded = decodeReview(body);
  if (!decoded.ok) return { ok: false, message: `invalid AdmissionReview: ${describeProblems(decoded.problems)}` };
  const { request } = decoded;
  let answer: AdmissionAnswer;
  try {
    answer = await webhook.admit(request, ctx);
  } catch (err: unknown) {
    const decision = deny([{ path: '', message: `internal error in webhook ${webhook.name}: ${errorMessage(err)}` }]);
    answer = { decision, failures: [{ check: webhook.name, error: err }] };
  }
  return { ok: true, review: encodeReview(request.uid, answer.decision, answer.patch), answer };
}
