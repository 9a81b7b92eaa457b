import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { DOMAIN_ANNOTATION, LAUNCHER_LABEL, LAUNCHER_VALUE } from '../../../../shared/api/internal/launcher.js';
import type { LauncherPod } from '../kube.js';
import { judgeLauncherEviction, launcherInstanceName, type EvictionStrategy } from './eviction.js';

const launcher = (over: { node?: string; phase?: string; labels?: Record<string, string>; annotations?: Record<string, string> } = {}): LauncherPod => ({
  metadata: {
    name: 'virt-launcher-web-abcde',
    namespace: 'demo',
    labels: over.labels ?? { [LAUNCHER_LABEL]: LAUNCHER_VALUE },
    annotations: over.annotations ?? { [DOMAIN_ANNOTATION]: 'web' },
  },
  spec: { nodeName: over.node ?? 'node-a', containers: [{ name: 'compute' }] },
  status: { phase: over.phase ?? 'Running' },
});

const instance = (over: { migratable?: boolean; node?: string; marked?: string; strategy?: string } = {}): InternalVirtualMachineInstance => ({
  apiVersion: 'internal.virtualization.deckhouse.io/v1',
  kind: 'InternalVirtualizationVirtualMachineInstance',
  metadata: { name: 'web', namespace: 'demo' },
  spec: { domain: {}, ...(over.strategy === undefined ? {} : { evictionStrategy: over.strategy }) },
  status: {
    nodeName: over.node ?? 'node-a',
    conditions: [{ type: 'LiveMigratable', status: over.migratable === false ? 'False' : 'True' }],
    ...(over.marked === undefined ? {} : { evacuationNodeName: over.marked }),
  },
});

const TRIGGERED = 'Eviction triggered evacuation of VMI "demo/web"';

describe('the eviction interceptor: which pods are launcher pods', () => {
  it.each([
    ['a running launcher pod names its instance', launcher(), 'web'],
    ['a pod without the launcher label is not judged', launcher({ labels: { app: 'web' } }), undefined],
    ['a launcher pod without the domain annotation is not judged', launcher({ annotations: {} }), undefined],
    ['a completed launcher pod is not judged', launcher({ phase: 'Succeeded' }), undefined],
    ['a failed launcher pod is not judged', launcher({ phase: 'Failed' }), undefined],
  ])('%s', (_, pod, expected) => {
    expect(launcherInstanceName(pod)).toBe(expected);
  });
});

describe('the eviction interceptor: the verdict, as KubeVirt v1.6 gives it', () => {
  const cases: Array<[string, ReturnType<typeof instance>, EvictionStrategy | undefined, unknown]> = [
    [
      'LiveMigrate and migratable: refused, the instance marked with the pod node',
      instance(),
      'LiveMigrate',
      { allowed: false, message: TRIGGERED, mark: 'node-a' },
    ],
    [
      'LiveMigrate and not migratable: refused, not marked',
      instance({ migratable: false }),
      'LiveMigrate',
      { allowed: false, message: 'VMI web is configured with an eviction strategy but is not live-migratable' },
    ],
    [
      'already marked: refused, evacuation in progress',
      instance({ marked: 'node-a' }),
      'LiveMigrate',
      { allowed: false, message: `Evacuation in progress: ${TRIGGERED}` },
    ],
    [
      'the pod is a migration target (instance elsewhere): refused',
      instance({ node: 'node-b' }),
      'LiveMigrate',
      { allowed: false, message: 'Eviction request for target Pod' },
    ],
    ['LiveMigrateIfPossible and not migratable: allowed', instance({ migratable: false }), 'LiveMigrateIfPossible', { allowed: true }],
    ['External: marked even when not migratable', instance({ migratable: false }), 'External', { allowed: false, message: TRIGGERED, mark: 'node-a' }],
    ['None: allowed', instance(), 'None', { allowed: true }],
    ['no strategy at all: allowed', instance(), undefined, { allowed: true }],
    ["the instance's own strategy wins over the cluster's", instance({ strategy: 'None' }), 'LiveMigrate', { allowed: true }],
  ];
  it.each(cases)('%s', (_, vmi, strategy, expected) => {
    expect(judgeLauncherEviction(launcher(), vmi, strategy)).toEqual(expected);
  });
});
