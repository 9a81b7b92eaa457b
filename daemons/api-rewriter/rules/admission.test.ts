import { describe, expect, it } from '@jest/globals';
import { AdmissionReviewError, KUBEVIRT_RULES, Renamer, renameAdmissionResponse, restoreAdmissionRequest } from './index.js';
import { renamedVmReview } from './testdata/reviews.js';

const r = new Renamer(KUBEVIRT_RULES);
const INT = 'internal.virtualization.deckhouse.io';

describe('AdmissionReview rewrite', () => {
  it('restores the request and renames the JSON Patch of the response', () => {
    const review = renamedVmReview();
    const kind = restoreAdmissionRequest(r, review);
    expect(kind).toBe('VirtualMachine');
    expect(review.request.kind).toEqual({ group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' });
    expect(review.request.resource).toEqual({ group: 'kubevirt.io', version: 'v1', resource: 'virtualmachines' });
    expect(review.request.object).toEqual({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm', labels: { 'kubevirt.io/a': 'b' } } });

    const patch = [{ op: 'add', path: '/metadata/labels/kubevirt.io~1x', value: 'y' }];
    const answer = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u1', allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') },
    };
    renameAdmissionResponse(r, answer, 'VirtualMachine');
    expect(JSON.parse(Buffer.from(answer.response.patch, 'base64').toString())).toEqual([
      { op: 'add', path: `/metadata/labels/kubevirt.${INT}~1x`, value: 'y' },
    ]);
  });

  it('leaves reviews of other groups and validating answers alone', () => {
    const review = {
      kind: 'AdmissionReview',
      request: { kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, object: { metadata: { labels: { [`kubevirt.${INT}/a`]: 'b' } } } },
    };
    const before = structuredClone(review);
    expect(restoreAdmissionRequest(r, review)).toBeUndefined();
    expect(review).toEqual(before);
    const answer = { kind: 'AdmissionReview', response: { uid: 'u', allowed: false, status: { message: 'no' } } };
    renameAdmissionResponse(r, answer, undefined);
    expect(answer.response).toEqual({ uid: 'u', allowed: false, status: { message: 'no' } });
  });

  it('refuses bodies that are not AdmissionReviews or carry a broken patch', () => {
    expect(() => restoreAdmissionRequest(r, { kind: 'Pod' })).toThrow(AdmissionReviewError);
    expect(() => renameAdmissionResponse(r, { kind: 'AdmissionReview' }, undefined)).toThrow(/with a response/);
    expect(() => renameAdmissionResponse(r, { response: { patchType: 'JSONPatch', patch: Buffer.from('{nope').toString('base64') } }, undefined)).toThrow(
      /not base64 JSON/,
    );
  });
});
