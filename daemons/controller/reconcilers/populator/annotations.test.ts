import { describe, expect, it } from '@jest/globals';
import type { PVC } from '../provisioning/kube.js';
import { DONE_ANNOTATION, SOURCE_DVCR_ANNOTATION, SOURCE_PVC_ANNOTATION, STRATEGY_ANNOTATION, populationOf, primeName } from './annotations.js';
import { primeOf } from './reconciler.js';

const ref = { apiGroup: 'virtualization.deckhouse.io', kind: 'VirtualDisk', name: 'vd-1' };
const claim = (annotations: Record<string, string>, dataSourceRef: PVC['spec']['dataSourceRef'] | null = ref): PVC => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'target', namespace: 'ns', uid: 'u-1', annotations },
  spec: { storageClassName: 'sc', volumeMode: 'Block', accessModes: ['ReadWriteOnce'], volumeName: 'pv-x', ...(dataSourceRef ? { dataSourceRef } : {}) },
});

describe('what the populator is asked to do', () => {
  it.each([
    ['no strategy: not ours', {}, ref, { kind: 'none' }],
    ['done', { [STRATEGY_ANNOTATION]: 'dvcr', [DONE_ANNOTATION]: 'true' }, ref, { kind: 'done' }],
    [
      'dvcr: the image without its scheme, the disk of the claim namespace',
      { [STRATEGY_ANNOTATION]: 'dvcr', [SOURCE_DVCR_ANNOTATION]: 'docker://dvcr/vd/ns/vd-1:u' },
      ref,
      { kind: 'fill', ref: { kind: 'VirtualDisk', name: 'vd-1', namespace: 'ns' }, source: { type: 'registry', image: 'dvcr/vd/ns/vd-1:u' } },
    ],
    [
      'host-assigned: another claim; a cluster image has no namespace',
      { [STRATEGY_ANNOTATION]: 'host-assigned', [SOURCE_PVC_ANNOTATION]: 'src' },
      { ...ref, kind: 'ClusterVirtualImage' },
      { kind: 'fill', ref: { kind: 'ClusterVirtualImage', name: 'vd-1', namespace: undefined }, source: { type: 'pvc', claimName: 'src' } },
    ],
  ])('%s', (_what, annotations, dataSourceRef, want) => {
    expect(populationOf(claim(annotations, dataSourceRef))).toEqual(want);
  });

  it.each([
    ['no dataSourceRef', { [STRATEGY_ANNOTATION]: 'dvcr', [SOURCE_DVCR_ANNOTATION]: 'x' }, null, /no spec\.dataSourceRef/],
    [
      'a core kind',
      { [STRATEGY_ANNOTATION]: 'dvcr', [SOURCE_DVCR_ANNOTATION]: 'x' },
      { kind: 'PersistentVolumeClaim', name: 'p' },
      /names a core PersistentVolumeClaim/,
    ],
    [
      'another kind of the group',
      { [STRATEGY_ANNOTATION]: 'dvcr', [SOURCE_DVCR_ANNOTATION]: 'x' },
      { ...ref, kind: 'VirtualMachine' },
      /VirtualMachine: it must be/,
    ],
    ['dvcr without its image', { [STRATEGY_ANNOTATION]: 'dvcr' }, ref, /needs the annotation virtualization\.deckhouse\.io\/pvc-population-source-dvcr/],
    ['host-assigned without its claim', { [STRATEGY_ANNOTATION]: 'host-assigned' }, ref, /pvc-population-source-pvc/],
    ['an unknown strategy', { [STRATEGY_ANNOTATION]: 'csi-magic' }, ref, /csi-magic is not supported here/],
  ])('refuses %s with a message naming it', (_what, annotations, dataSourceRef, message) => {
    const got = populationOf(claim(annotations, dataSourceRef));
    expect(got.kind).toBe('invalid');
    expect(got.kind === 'invalid' ? got.message : '').toMatch(message);
  });
});

describe('the prime claim', () => {
  it('has the target spec without data source or volume, is owned by the target and kept out of quota', () => {
    const prime = primeOf(claim({}, ref));
    expect(prime.metadata).toMatchObject({ name: primeName('target'), namespace: 'ns', labels: { 'resource-quota-overrides.deckhouse.io/ignore': 'true' } });
    expect(prime.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'PersistentVolumeClaim', name: 'target', uid: 'u-1', controller: true })]);
    expect(prime.spec).toEqual({ storageClassName: 'sc', volumeMode: 'Block', accessModes: ['ReadWriteOnce'] });
  });
});
