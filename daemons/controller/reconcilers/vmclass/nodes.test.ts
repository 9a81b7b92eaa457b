import { describe, expect, it } from '@jest/globals';
import type { Node } from '../../kube/resources.js';
import { CPU_FEATURE_LABEL_PREFIX, commonCpuFeatures, matchesSelector, maxAllocatable, nodeFits, tolerates } from './nodes.js';

const node = (labels: Record<string, string>, spec: Node['spec'] = {}, allocatable?: Record<string, string>): Node => ({
  metadata: { name: 'n', labels },
  spec,
  ...(allocatable ? { status: { allocatable } } : {}),
});

describe('node selection of a class', () => {
  it.each<[string, Parameters<typeof matchesSelector>[1], boolean]>([
    ['no selector', undefined, true],
    ['matching labels', { matchLabels: { zone: 'a' } }, true],
    ['a different label value', { matchLabels: { zone: 'b' } }, false],
    ['In', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }, true],
    ['NotIn', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, false],
    ['Exists', { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, false],
    ['DoesNotExist', { matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }, true],
    ['an unknown operator', { matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['1'] }] }, false],
  ])('selector: %s', (_what, selector, matches) => {
    expect(matchesSelector({ zone: 'a' }, selector)).toBe(matches);
  });

  it.each([
    [{ key: 'dedicated', operator: 'Equal', value: 'vm', effect: 'NoSchedule' }, true],
    [{ key: 'dedicated', operator: 'Exists' }, true],
    [{ operator: 'Exists' }, true],
    [{ key: 'dedicated', operator: 'Equal', value: 'db' }, false],
    [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, false],
  ])('toleration %j of taint dedicated=vm:NoSchedule: %s', (toleration, ok) => {
    expect(tolerates(toleration, { key: 'dedicated', value: 'vm', effect: 'NoSchedule' })).toBe(ok);
  });

  it('takes a node whose placement taints are tolerated, ignoring condition taints such as not-ready', () => {
    const tainted = node(
      {},
      {
        taints: [
          { key: 'dedicated', value: 'vm', effect: 'NoSchedule' },
          { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
        ],
      },
    );
    expect(nodeFits(tainted, undefined, [])).toBe(false);
    expect(nodeFits(tainted, undefined, [{ key: 'dedicated', operator: 'Exists' }])).toBe(true);
    expect(nodeFits(node({}, { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] }), undefined, [])).toBe(true);
    expect(nodeFits(node({}, { unschedulable: true }), undefined, [])).toBe(false);
  });

  it('finds the CPU features all nodes advertise', () => {
    const f = (...names: string[]): Record<string, string> => Object.fromEntries(names.map((n) => [`${CPU_FEATURE_LABEL_PREFIX}${n}`, 'true']));
    expect(commonCpuFeatures([node(f('avx', 'sse4_2', 'svm')), node(f('sse4_2', 'avx'))])).toEqual(['avx', 'sse4_2']);
    expect(commonCpuFeatures([])).toEqual([]);
  });

  it('reports the largest allocatable CPU and memory of one node', () => {
    expect(maxAllocatable([node({}, {}, { cpu: '4', memory: '8Gi' }), node({}, {}, { cpu: '3500m', memory: '16Gi' })])).toEqual({ cpu: '4', memory: '16Gi' });
    expect(maxAllocatable([node({})])).toBeUndefined();
  });
});
