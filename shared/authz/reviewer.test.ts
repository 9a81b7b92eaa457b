import { describe, expect, it } from '@jest/globals';
import { InvalidObjectError, type RestRequest } from '../kube/index.js';
import { METRICS_ATTRIBUTES } from './metrics.js';
import { KubeReviewer } from './reviewer.js';

/** A RestPort answering from a queue, keeping the requests. */
function rest(...answers: unknown[]): { port: { request: (req: RestRequest) => Promise<unknown> }; sent: RestRequest[] } {
  const sent: RestRequest[] = [];
  return { sent, port: { request: (req) => (sent.push(req), Promise.resolve(answers.shift())) } };
}

const review = (kind: string, status: unknown): unknown => ({
  apiVersion: kind === 'TokenReview' ? 'authentication.k8s.io/v1' : 'authorization.k8s.io/v1',
  kind,
  status,
});

describe('KubeReviewer', () => {
  it('POSTs a TokenReview and returns the user only when the token is authenticated', async () => {
    const user = {
      username: 'system:serviceaccount:ns:sa',
      uid: 'u-1',
      groups: ['system:serviceaccounts'],
      extra: { 'authentication.kubernetes.io/pod-name': ['p'] },
    };
    const { port, sent } = rest(
      review('TokenReview', { authenticated: true, user }),
      review('TokenReview', { authenticated: false, error: 'invalid bearer token' }),
    );
    const reviewer = new KubeReviewer(port, { audiences: ['https://kubernetes.default.svc'] });
    expect(await reviewer.authenticate('t0k3n')).toEqual(user);
    expect(await reviewer.authenticate('bad')).toBeUndefined();
    expect(sent[0]).toMatchObject({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/tokenreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 't0k3n', audiences: ['https://kubernetes.default.svc'] } },
    });
    expect(sent.map((r) => r.what).join(' ')).not.toContain('t0k3n');
  });

  it('POSTs a SubjectAccessReview carrying the reviewed user, groups, uid and extra', async () => {
    const { port, sent } = rest(review('SubjectAccessReview', { allowed: true }), review('SubjectAccessReview', { allowed: false, reason: 'nope' }));
    const reviewer = new KubeReviewer(port);
    const user = { username: 'u', uid: 'id', groups: ['g'], extra: { k: ['v'] } };
    expect(await reviewer.authorize(user, METRICS_ATTRIBUTES)).toEqual({ allowed: true, reason: undefined });
    expect(
      await reviewer.authorize({ username: 'u' }, { resourceAttributes: { verb: 'get', resource: 'services', subresource: 'proxy', namespace: 'n' } }),
    ).toEqual({ allowed: false, reason: 'nope' });
    expect(sent.map((r) => [r.path, r.body])).toEqual([
      [
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: 'u', uid: 'id', groups: ['g'], extra: { k: ['v'] }, nonResourceAttributes: { path: '/metrics', verb: 'get' } },
        },
      ],
      [
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: 'u', resourceAttributes: { verb: 'get', resource: 'services', subresource: 'proxy', namespace: 'n' } },
        },
      ],
    ]);
  });

  it('refuses an answer that is not a review (no verdict is made up)', async () => {
    const { port } = rest({ kind: 'Status', status: 'Failure' }, review('SubjectAccessReview', {}));
    const reviewer = new KubeReviewer(port);
    await expect(reviewer.authenticate('t')).rejects.toBeInstanceOf(InvalidObjectError);
    await expect(reviewer.authorize({ username: 'u' }, METRICS_ATTRIBUTES)).rejects.toThrow(/status\.allowed/);
  });
});
