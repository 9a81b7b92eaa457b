/** The VM's labels and annotations on its running launcher pod, and off again when removed from the VM. */
import { describe, expect, it } from '@jest/globals';
import { CREATED_BY_LABEL, INHIBIT_NODE_SHUTDOWN_LABEL, LAUNCHER_LABEL, LAUNCHER_VALUE, VM_NAME_LABEL } from '../../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import type { Pod } from '../../../kube/resources.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import {
  LAST_PROPAGATED_ANNOTATIONS,
  LAST_PROPAGATED_LABELS,
  metadataChanges,
  parseLastPropagated,
  propagatableAnnotations,
  leftBehind,
  syncMetadataHandler,
} from './sync-metadata.js';

const OWN = { [LAUNCHER_LABEL]: LAUNCHER_VALUE, [CREATED_BY_LABEL]: 'vmi-1', [VM_NAME_LABEL]: 'web' };
/** What the original adds to a running VM's objects: the node-shutdown inhibitor's label. */
const HELD = { [INHIBIT_NODE_SHUTDOWN_LABEL]: '' };
const vm = (labels: Record<string, string>, annotations: Record<string, string> = {}): VirtualMachine => {
  const v = vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic');
  return { ...v, metadata: { ...v.metadata, labels, annotations } };
};
const kvvm = (annotations: Record<string, string> = {}): InternalVirtualMachine =>
  ({ metadata: { namespace: 'ns', name: 'web', annotations }, spec: { template: {} } }) as unknown as InternalVirtualMachine;
const kvvmi = {
  metadata: { namespace: 'ns', name: 'web', uid: 'vmi-1' },
  spec: {},
  status: { phase: 'Running', nodeName: 'n1' },
} as unknown as InternalVirtualMachineInstance;
const pod = (labels: Record<string, string>, phase = 'Running', annotations: Record<string, string> = {}): Pod => ({
  metadata: { name: 'virt-launcher-web-abcde', namespace: 'ns', labels: { ...OWN, ...labels }, annotations },
  spec: { nodeName: 'n1' },
  status: { phase },
});

/** The handler's pass; the internal VM carries the VM's metadata already (syncKvvm's part) unless `synced` is false. */
async function sync(theVm: VirtualMachine, theKvvm: InternalVirtualMachine, thePod: Pod, synced = true) {
  const carried: InternalVirtualMachine = synced
    ? {
        ...theKvvm,
        metadata: {
          ...theKvvm.metadata,
          labels: { ...theVm.metadata.labels, ...HELD },
          annotations: { ...propagatableAnnotations(theVm.metadata.annotations), ...theKvvm.metadata.annotations },
        },
      }
    : theKvvm;
  const { deps, kinds } = inMemoryDeps({ seed: { pods: [thePod], kvvms: [carried], kvvmis: [kvvmi] } });
  const state = initVMState(theVm);
  state.kvvm = deps.caches.kvvms.get('ns/web');
  state.kvvmi = deps.caches.kvvmis.get('ns/web');
  await syncMetadataHandler(deps).handle(state, handlerContext());
  return { pod: kinds.pods.stored('ns/virt-launcher-web-abcde'), kvvm: kinds.kvvms.stored('ns/web'), kvvmi: kinds.kvvmis.stored('ns/web') };
}

describe('metadata propagation', () => {
  it('puts the VM labels and annotations on its running launcher pod and remembers them on the internal VM', async () => {
    const out = await sync(vm({ team: 'a' }, { note: 'x', 'kubectl.kubernetes.io/last-applied-configuration': '{}' }), kvvm(), pod({}));
    expect(out.pod?.metadata.labels).toEqual({ ...OWN, ...HELD, team: 'a' });
    expect(out.pod?.metadata.annotations).toEqual({ note: 'x' });
    expect(out.kvvm?.metadata.annotations?.[LAST_PROPAGATED_LABELS]).toBe('{"team":"a"}');
    expect(out.kvvm?.metadata.annotations?.[LAST_PROPAGATED_ANNOTATIONS]).toBe('{"note":"x"}');
    expect(out.kvvmi?.metadata.labels).toEqual({ ...HELD, team: 'a' });
    expect(out.kvvmi?.metadata.annotations).toEqual({ note: 'x' });
  });

  it('keeps the old record while the internal VM does not carry the VM metadata yet, so a key removed meanwhile is still taken off', async () => {
    const out = await sync(vm({ team: 'a' }), kvvm({ [LAST_PROPAGATED_LABELS]: '{"tier":"web"}' }), pod({ tier: 'web' }), false);
    expect(out.pod?.metadata.labels).toEqual({ ...OWN, ...HELD, team: 'a' });
    expect(out.kvvm?.metadata.annotations?.[LAST_PROPAGATED_LABELS]).toBe('{"tier":"web"}');
  });

  it('takes a label removed from the VM off the pod, leaving labels others set', async () => {
    const remembered = kvvm({ [LAST_PROPAGATED_LABELS]: '{"team":"a","tier":"web"}' });
    const out = await sync(vm({ team: 'a' }), remembered, pod({ team: 'a', tier: 'web', other: 'kept' }));
    expect(out.pod?.metadata.labels).toEqual({ ...OWN, ...HELD, team: 'a', other: 'kept' });
    expect(out.kvvm?.metadata.annotations?.[LAST_PROPAGATED_LABELS]).toBe('{"team":"a"}');
  });

  it('leaves a pod that does not run yet alone', async () => {
    const out = await sync(vm({ team: 'a' }), kvvm(), pod({}, 'Pending'));
    expect(out.pod?.metadata.labels).toEqual(OWN);
  });

  it('treats an unreadable last-propagated annotation as nothing propagated and rewrites it', async () => {
    expect(parseLastPropagated('not json')).toEqual({ map: {}, broken: true });
    expect(parseLastPropagated('{"a":1}')).toEqual({ map: {}, broken: true });
    expect(parseLastPropagated('["a"]')).toEqual({ map: {}, broken: true });
    const out = await sync(vm({ team: 'a' }), kvvm({ [LAST_PROPAGATED_LABELS]: '{broken' }), pod({}));
    expect(out.pod?.metadata.labels).toEqual({ ...OWN, ...HELD, team: 'a' });
    expect(out.kvvm?.metadata.annotations?.[LAST_PROPAGATED_LABELS]).toBe('{"team":"a"}');
  });

  it('computes no change when the pod already shows the VM', () => {
    expect(metadataChanges({ a: '1', b: '2' }, { a: '1' }, { a: '1' })).toBeUndefined();
    expect(metadataChanges({ a: '1' }, { a: '1', gone: 'x' }, { a: '2' })).toEqual({ a: '2' });
  });

  it('knows the pod a finished migration left behind: the source of a completed one, the target of a failed one', () => {
    const vmi = (m: Record<string, unknown> | undefined) => ({ ...kvvmi, status: { ...kvvmi.status, migrationState: m } }) as InternalVirtualMachineInstance;
    const done = { startTimestamp: 't0', endTimestamp: 't1', sourcePod: 'src', targetPod: 'dst' };
    expect(leftBehind('src', vmi({ ...done, completed: true }))).toBe(true);
    expect(leftBehind('dst', vmi({ ...done, completed: true }))).toBe(false);
    expect(leftBehind('dst', vmi({ ...done, failed: true }))).toBe(true);
    expect(leftBehind('src', vmi({ ...done, endTimestamp: undefined, completed: true }))).toBe(false);
    expect(leftBehind('src', vmi(undefined))).toBe(false);
  });
});
