import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { z } from 'zod';
import { parseConfig } from '../config/index.js';
import { ConfigError } from '../errors/index.js';
import { metricsAttributes, metricsAuthConfigShape, metricsGuard, metricsGuardFromEnv, parseResourceAttributes } from './metrics.js';

const schema = z.object(metricsAuthConfigShape);

function capture(): { log: pino.Logger; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  return { log: pino({ level: 'debug' }, sink), lines };
}

describe('metrics auth config', () => {
  it('protects /metrics by default with get on the URL /metrics', () => {
    const settings = parseConfig(schema, {});
    expect(settings).toEqual({ METRICS_AUTH: 'kubernetes', METRICS_AUTH_RESOURCE_ATTRIBUTES: undefined });
    expect(metricsAttributes(settings)).toEqual({ nonResourceAttributes: { path: '/metrics', verb: 'get' } });
  });

  it('takes resource attributes instead, as kube-rbac-proxy --resource-attributes', () => {
    const settings = parseConfig(schema, {
      METRICS_AUTH_RESOURCE_ATTRIBUTES: 'namespace=d8-virtualization, resource=services,subresource=proxy,name=controller-metrics,group=',
    });
    expect(metricsAttributes(settings)).toEqual({
      resourceAttributes: { verb: 'get', namespace: 'd8-virtualization', resource: 'services', subresource: 'proxy', name: 'controller-metrics' },
    });
  });

  it('reports every problem of a bad value', () => {
    expect(parseResourceAttributes('verb=list,name=a,name=b')).toEqual([
      '`verb=list` is not key=value with a key of namespace, group, version, resource, subresource, name',
      'name is given twice',
      'resource is required',
    ]);
    expect(() => parseConfig(schema, { METRICS_AUTH: 'basic', METRICS_AUTH_RESOURCE_ATTRIBUTES: 'name' })).toThrow(ConfigError);
  });
});

describe('the guard built from the config', () => {
  it('is absent with METRICS_AUTH=none', () => {
    const settings = { METRICS_AUTH: 'none', METRICS_AUTH_RESOURCE_ATTRIBUTES: undefined } as const;
    expect(metricsGuard(settings, { rest: { request: () => Promise.resolve({}) } }, capture().log)).toBeUndefined();
    expect(metricsGuardFromEnv({ ...settings, KUBECONFIG: undefined }, {}, capture().log)).toBeUndefined();
  });

  it('without a kubeconfig outside a pod: logs once, 401 without a token, 503 naming the problem with one', async () => {
    const { log, lines } = capture();
    const guard = metricsGuardFromEnv({ METRICS_AUTH: 'kubernetes', METRICS_AUTH_RESOURCE_ATTRIBUTES: undefined, KUBECONFIG: undefined }, {}, log);
    const results = [await guard?.check(undefined), await guard?.check('Bearer x'), await guard?.check('Bearer y')];
    expect(results.map((d) => (d?.allowed === false ? d.status : 200))).toEqual([401, 503, 503]);
    expect(results[1]).toMatchObject({
      message: expect.stringMatching(/^METRICS_AUTH=kubernetes but there is no Kubernetes API .*KUBECONFIG is unset and this is not a pod/),
    });
    expect(lines.filter((l) => l.level >= 40)).toHaveLength(1);
  });

  it('with a KUBECONFIG that cannot be read: 503 naming the file', async () => {
    const { log } = capture();
    const guard = metricsGuardFromEnv(
      { METRICS_AUTH: 'kubernetes', METRICS_AUTH_RESOURCE_ATTRIBUTES: undefined, KUBECONFIG: '/nonexistent/kubeconfig' },
      {},
      log,
    );
    expect(await guard?.check('Bearer x')).toMatchObject({
      status: 503,
      message: expect.stringContaining('KUBECONFIG /nonexistent/kubeconfig cannot be loaded'),
    });
  });
});
