/** The AdmissionReview v1 codec: envelope checks and the answer's shape. */
import { describe, expect, it } from '@jest/globals';
import { decodeReview, encodeReview } from './review.js';

const envelope = (request: Record<string, unknown>, top: Record<string, unknown> = {}): unknown => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u-1',
    kind: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachine' },
    resource: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', resource: 'virtualmachines' },
    name: 'vm1',
    namespace: 'ns1',
    operation: 'CREATE',
    userInfo: { username: 'jane', groups: ['dev'] },
    object: { kind: 'VirtualMachine' },
    ...request,
  },
  ...top,
});

describe('decodeReview', () => {
  it('reads a well-formed review into a request', () => {
    const decoded = decodeReview(envelope({ subResource: '', dryRun: true }));
    expect(decoded).toEqual({
      ok: true,
      request: {
        uid: 'u-1',
        kind: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachine' },
        subResource: undefined,
        name: 'vm1',
        namespace: 'ns1',
        operation: 'CREATE',
        userInfo: { username: 'jane', groups: ['dev'] },
        object: { kind: 'VirtualMachine' },
        oldObject: null,
        dryRun: true,
      },
    });
  });

  it.each([
    ['a wrong apiVersion', envelope({}, { apiVersion: 'admission.k8s.io/v1beta1' }), 'apiVersion', /must be admission.k8s.io\/v1/],
    ['a wrong kind', envelope({}, { kind: 'TokenReview' }), 'kind', /must be AdmissionReview/],
    ['a missing uid', envelope({ uid: undefined }), 'request.uid', /string/],
    ['an empty uid', envelope({ uid: '' }), 'request.uid', /non-empty/],
    ['an unknown operation', envelope({ operation: 'PATCH' }), 'request.operation', /CREATE/],
    ['an object that is not an object', envelope({ object: 'vm' }), 'request.object', /./],
  ])('refuses %s, naming the field', (_what, body, path, message) => {
    const decoded = decodeReview(body);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.problems).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it.each([null, 42, 'text', [], {}])('refuses %p without throwing', (body) => {
    expect(decodeReview(body).ok).toBe(false);
  });
});

describe('encodeReview', () => {
  it('lists every violation with its path in the denial message and the causes', () => {
    const review = encodeReview('u-1', {
      allowed: false,
      violations: [
        { path: 'metadata.name', message: 'too long' },
        { path: 'spec.cpu.cores', message: 'too many' },
      ],
      warnings: [],
    });
    expect(review).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'u-1',
        allowed: false,
        status: {
          code: 403,
          reason: 'Forbidden',
          message: 'metadata.name: too long; spec.cpu.cores: too many',
          details: {
            causes: [
              { type: 'FieldValueInvalid', field: 'metadata.name', message: 'too long' },
              { type: 'FieldValueInvalid', field: 'spec.cpu.cores', message: 'too many' },
            ],
          },
        },
      },
    });
  });

  it('returns warnings as warnings, with control characters replaced', () => {
    const review = encodeReview('u-1', { allowed: true, violations: [], warnings: ['line one\nline two'] });
    expect(review.response).toEqual({ uid: 'u-1', allowed: true, warnings: ['line one line two'] });
  });

  it('carries a JSON Patch, base64-encoded, only when allowed', () => {
    const patch = [{ op: 'add' as const, path: '/spec/x', value: 1 }];
    const allowed = encodeReview('u-1', { allowed: true, violations: [], warnings: [] }, patch);
    expect(allowed.response.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(allowed.response.patch ?? '', 'base64').toString())).toEqual(patch);
    const denied = encodeReview('u-1', { allowed: false, violations: [{ path: '', message: 'no' }], warnings: [] }, patch);
    expect(denied.response.patch).toBeUndefined();
    expect(denied.response.status?.message).toBe('no');
  });
});
