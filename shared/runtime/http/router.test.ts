import { describe, expect, it } from '@jest/globals';
import { BadRequestError } from '../../errors/index.js';
import { Router } from './router.js';

const router = new Router([
  { method: 'GET', path: '/health/readiness', value: 'ready' },
  { method: 'POST', path: '/objects/:name', value: 'object' },
  { method: 'GET', path: '/apis/:group/*rest', value: 'rest' },
  { method: 'GET', path: '/first/:any', value: 'pattern first' },
  { method: 'GET', path: '/first/fixed', value: 'literal second' },
  { method: 'POST', path: '/', value: 'root' },
]);

describe('Router: express 5 matching, compiled once', () => {
  it('matches literals loosely: any case, one optional trailing slash, never a longer path', () => {
    const found = ['/health/readiness', '/Health/READINESS', '/health/readiness/', '/health/readiness//', '/health/readiness/x', '/health'].map(
      (p) => router.find('GET', p)?.value,
    );
    expect(found).toEqual(['ready', 'ready', 'ready', undefined, undefined, undefined]);
  });

  it('decodes parameters and gives a wildcard its segments', () => {
    expect(router.find('POST', '/objects/vm%2D1')).toEqual({ value: 'object', params: { name: 'vm-1' } });
    expect(router.find('GET', '/apis/g/v1/things')).toEqual({ value: 'rest', params: { group: 'g', rest: ['v1', 'things'] } });
    expect(router.find('POST', '/objects/a/b')).toBeUndefined();
  });

  it('refuses a malformed percent escape in a parameter as a bad request', () => {
    expect(() => router.find('POST', '/objects/%E0%A4%A')).toThrow(BadRequestError);
  });

  it('takes the first declared route that matches and serves HEAD with the GET route', () => {
    expect(router.find('GET', '/first/fixed')?.value).toBe('pattern first');
    expect(router.find('HEAD', '/health/readiness')?.value).toBe('ready');
    expect([router.find('GET', '/')?.value, router.find('DELETE', '/objects/x')?.value, router.find('POST', '/')?.value]).toEqual([
      undefined,
      undefined,
      'root',
    ]);
  });
});
