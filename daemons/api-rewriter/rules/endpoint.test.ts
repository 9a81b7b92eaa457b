import { describe, expect, it } from '@jest/globals';
import { KUBEVIRT_RULES, Renamer, planRequest } from './index.js';

const r = new Renamer(KUBEVIRT_RULES);
const INT = 'internal.virtualization.deckhouse.io';

describe('planRequest', () => {
  it('renames the group and resource of a namespaced object path and keeps name and subresource', () => {
    const p = planRequest(r, '/apis/kubevirt.io/v1/namespaces/ns1/virtualmachines/vm1/status');
    expect(p.upstreamUrl).toBe(`/apis/${INT}/v1/namespaces/ns1/internalvirtualizationvirtualmachines/vm1/status`);
    expect(p.body).toBe('rewrite');
    expect(p.hintKind).toBe('VirtualMachine');
    expect(p.endpoint).toMatchObject({ kind: 'resource', namespace: 'ns1', name: 'vm1', subresource: 'status', watch: false });
  });

  it('does not mistake a namespace named like the resource for the resource', () => {
    const p = planRequest(r, '/apis/kubevirt.io/v1/namespaces/virtualmachines/virtualmachines/virtualmachines');
    expect(p.upstreamUrl).toBe(`/apis/${INT}/v1/namespaces/virtualmachines/internalvirtualizationvirtualmachines/virtualmachines`);
  });

  it('marks watches by query and by the legacy /watch/ path', () => {
    expect(planRequest(r, '/apis/kubevirt.io/v1/virtualmachineinstances?watch=true&resourceVersion=5').endpoint.watch).toBe(true);
    const legacy = planRequest(r, '/apis/kubevirt.io/v1/watch/namespaces/a/virtualmachines');
    expect(legacy.endpoint.watch).toBe(true);
    expect(legacy.upstreamUrl).toBe(`/apis/${INT}/v1/watch/namespaces/a/internalvirtualizationvirtualmachines`);
    expect(planRequest(r, '/api/v1/pods?watch=false').endpoint.watch).toBe(false);
  });

  it('renames label selectors on any path and keeps the rest of the query', () => {
    const p = planRequest(r, '/api/v1/namespaces/a/pods?limit=5&labelSelector=kubevirt.io%2Fdomain%3Dvm1%2Capp+in+%28a%2Cb%29');
    const q = new URLSearchParams(p.upstreamUrl.split('?')[1]);
    expect(q.get('labelSelector')).toBe(`kubevirt.${INT}/domain=vm1,app in (a,b)`);
    expect(q.get('limit')).toBe('5');
    expect(p.body).toBe('inspect');
  });

  it('renames the CRD of a renamed resource by path and by field selector', () => {
    expect(planRequest(r, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/virtualmachines.kubevirt.io').upstreamUrl).toBe(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/internalvirtualizationvirtualmachines.${INT}`,
    );
    const w = planRequest(r, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldSelector=metadata.name%3Dvirtualmachines.kubevirt.io&watch=1');
    expect(new URLSearchParams(w.upstreamUrl.split('?')[1]).get('fieldSelector')).toBe(`metadata.name=internalvirtualizationvirtualmachines.${INT}`);
    expect(planRequest(r, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com').upstreamUrl).toBe(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com',
    );
  });

  it('classifies discovery and OpenAPI paths', () => {
    expect(planRequest(r, '/apis').body).toBe('rewrite');
    expect(planRequest(r, '/apis/kubevirt.io').upstreamUrl).toBe(`/apis/${INT}`);
    expect(planRequest(r, '/apis/kubevirt.io/v1').upstreamUrl).toBe(`/apis/${INT}/v1`);
    expect(planRequest(r, '/apis/apps/v1').body).toBe('pass');
    expect(planRequest(r, '/openapi/v3').body).toBe('rewrite');
    expect(planRequest(r, '/openapi/v3/apis/kubevirt.io/v1?hash=abc').upstreamUrl).toBe(`/openapi/v3/apis/${INT}/v1?hash=abc`);
    expect(planRequest(r, '/openapi/v3/apis/apps/v1').body).toBe('pass');
  });

  it('passes unknown paths and resources through unchanged', () => {
    for (const url of [
      '/healthz',
      '/version',
      '/api',
      '/api/v1/namespaces/a/leases/x',
      '/apis/virtualization.deckhouse.io/v1alpha2/namespaces/a/virtualmachines',
      '/metrics?x=1',
    ]) {
      const p = planRequest(r, url);
      expect(p.upstreamUrl).toBe(url);
      expect(p.body).toBe('pass');
    }
  });

  it('parses core namespace paths like the apiserver', () => {
    expect(planRequest(r, '/api/v1/namespaces/a').endpoint).toMatchObject({ resource: 'namespaces', name: 'a' });
    expect(planRequest(r, '/api/v1/namespaces/a/status').endpoint).toMatchObject({ resource: 'namespaces', name: 'a', subresource: 'status' });
    expect(planRequest(r, '/api/v1/namespaces/a/pods/p').endpoint).toMatchObject({ namespace: 'a', resource: 'pods', name: 'p' });
  });
});
