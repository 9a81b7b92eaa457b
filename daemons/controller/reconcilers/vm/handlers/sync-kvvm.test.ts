/**
 * The VM syncKvvm handler on its own, over in-memory kinds: the internal VM created once every
 * dependency is ready, kept equal to the VM spec and class, and a change to a running instance held
 * for a restart (ConfigurationApplied, AwaitingRestartToApplyConfiguration,
 * status.restartAwaitingChanges) unless restartApprovalMode is Automatic.
 */
import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../../../shared/api/resources/virtualmachineclass.js';
import { ConflictError, KubeApiError } from '../../../../../shared/errors/index.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import { LAST_APPLIED_SPEC, buildInternalVM } from '../kvvm/build.js';
import type { ResolvedDevice } from '../kvvm/devices.js';
import type { VMState } from '../state.js';
import { RefusalBackoff } from '../refusal.js';
import { syncKvvmHandler } from './sync-kvvm.js';

const vmClass = {
  apiVersion: 'virtualization.deckhouse.io/v1alpha2',
  kind: 'VirtualMachineClass',
  metadata: { name: 'generic' },
  spec: { cpu: { type: 'Host' } },
  status: { phase: 'Ready' },
} as VirtualMachineClass;

function vm(spec: Partial<VirtualMachine['spec']> = {}): VirtualMachine {
  const v = vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic', { runPolicy: 'Manual', ...spec });
  return { ...v, metadata: { ...v.metadata, uid: 'vm-uid', generation: 2 } };
}
/** The internal VM as an earlier pass built it from `from`. */
const applied = (from: VirtualMachine): InternalVirtualMachine =>
  buildInternalVM({ vm: from, vmClass, devices: [], ipAddress: undefined, runStrategy: 'Manual' });
const kvvmi = (phase: string): InternalVirtualMachineInstance =>
  ({ metadata: { namespace: 'ns', name: 'web', uid: 'vmi-1' }, spec: {}, status: { phase } }) as unknown as InternalVirtualMachineInstance;

function pass(seed: { kvvm?: InternalVirtualMachine; kvvmi?: InternalVirtualMachineInstance }, v: VirtualMachine, ready = true) {
  const { deps, kinds } = inMemoryDeps({ seed: { kvvms: seed.kvvm ? [seed.kvvm] : [], kvvmis: seed.kvvmi ? [seed.kvvmi] : [] } });
  const state: VMState = initVMState(v);
  state.kvvm = deps.caches.kvvms.get('ns/web');
  state.kvvmi = deps.caches.kvvmis.get('ns/web');
  if (ready) {
    state.vmClass = vmClass;
    state.devices = [];
  }
  return { deps, kinds, state, run: () => syncKvvmHandler(deps).handle(state, handlerContext()) };
}
const cond = (s: VMState, type: string) => s.status.conditions?.find((c) => c.type === type);
const bigger = { memory: { size: '4Gi' } };

describe('the VM syncKvvm handler', () => {
  it.each<[string, (p: ReturnType<typeof pass>) => void]>([
    ['a dependency is missing', (p) => p.state.waitingFor.push('VirtualDisk root not found')],
    ['the class is not resolved yet', (p) => delete p.state.vmClass],
    ['the devices are not resolved yet', (p) => delete p.state.devices],
  ])('makes no internal VM while %s', async (_what, unready) => {
    const p = pass({}, vm());
    unready(p);
    await p.run();
    expect(p.kinds.kvvms.calls).toEqual([]);
    expect(cond(p.state, 'ConfigurationApplied')).toBeUndefined();
  });

  it.each<[VirtualMachine['spec']['runPolicy'], string, boolean]>([
    ['Manual', 'Manual', false],
    ['AlwaysOnUnlessStoppedManually', 'Always', true],
  ])('creates the internal VM (runPolicy %s: runStrategy %s) and states the configuration applied', async (runPolicy, runStrategy, startPending) => {
    const p = pass({}, vm({ runPolicy }));
    await p.run();
    const made = p.kinds.kvvms.stored('ns/web');
    expect(made?.spec.runStrategy).toBe(runStrategy);
    expect(made?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'VirtualMachine', name: 'web', uid: 'vm-uid', controller: true })]);
    expect(p.state.kvvm?.metadata.resourceVersion).toBe(made?.metadata.resourceVersion);
    expect(p.state.startPending).toBe(startPending);
    expect(cond(p.state, 'ConfigurationApplied')).toMatchObject({ status: 'True', reason: 'ConfigurationApplied' });
  });

  it('writes nothing when the internal VM already matches', async () => {
    const p = pass({ kvvm: applied(vm()), kvvmi: kvvmi('Running') }, vm());
    await p.run();
    expect(p.kinds.kvvms.calls).toEqual([]);
    expect(cond(p.state, 'ConfigurationApplied')).toMatchObject({ status: 'True' });
  });

  it('applies a change at once to a stopped VM, conditional on the version it read, and clears what waited', async () => {
    const p = pass({ kvvm: applied(vm()) }, vm(bigger));
    p.state.status.restartAwaitingChanges = [{ operation: 'replace', path: 'memory.size', currentValue: '2Gi', desiredValue: '4Gi' }];
    p.state.status.conditions = [
      {
        type: 'AwaitingRestartToApplyConfiguration',
        status: 'True',
        reason: 'ChangesPendingRestart',
        message: 'old',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ];
    await p.run();
    const [call] = p.kinds.kvvms.calls;
    expect(call?.verb).toBe('mergePatch');
    expect(call?.body).toMatchObject({ metadata: { resourceVersion: expect.any(String) } });
    expect(JSON.parse(p.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[LAST_APPLIED_SPEC] ?? '{}')).toMatchObject({ memory: { size: '4Gi' } });
    expect(cond(p.state, 'ConfigurationApplied')).toMatchObject({ status: 'True', reason: 'ConfigurationApplied' });
    expect(cond(p.state, 'AwaitingRestartToApplyConfiguration')).toBeUndefined();
    expect(p.state.status.restartAwaitingChanges).toBeUndefined();
  });

  it.each(['Running', 'Scheduling'])('holds a change to a %s instance for a restart (Manual approval), listing it', async (phase) => {
    const p = pass({ kvvm: applied(vm()), kvvmi: kvvmi(phase) }, vm(bigger));
    await p.run();
    expect(cond(p.state, 'ConfigurationApplied')).toMatchObject({
      status: 'False',
      reason: 'ConfigurationNotApplied',
      message: expect.stringMatching(/1 change\(s\) wait for a restart: memory.size/),
    });
    expect(cond(p.state, 'AwaitingRestartToApplyConfiguration')).toMatchObject({ status: 'True', reason: 'ChangesPendingRestart' });
    expect(p.state.status.restartAwaitingChanges).toEqual([{ operation: 'replace', path: 'memory.size', currentValue: '2Gi', desiredValue: '4Gi' }]);
    expect(JSON.parse(p.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[LAST_APPLIED_SPEC] ?? '{}')).toMatchObject({ memory: { size: '2Gi' } });
    expect(p.state.power.kind).toBe('none');
  });

  it('applies a change to a running instance and restarts it when restartApprovalMode is Automatic', async () => {
    const p = pass({ kvvm: applied(vm()), kvvmi: kvvmi('Running') }, vm({ ...bigger, disruptions: { restartApprovalMode: 'Automatic' } }));
    await p.run();
    expect(p.state.power).toMatchObject({ kind: 'restart' });
    expect(JSON.parse(p.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[LAST_APPLIED_SPEC] ?? '{}')).toMatchObject({ memory: { size: '4Gi' } });
    expect(cond(p.state, 'ConfigurationApplied')).toMatchObject({ status: 'True' });
    expect(p.state.status.restartAwaitingChanges).toBeUndefined();
  });

  describe('a disk moving to another storage class', () => {
    const disk = (pvc: string, migratingFrom?: string): ResolvedDevice => ({
      kind: 'VirtualDisk',
      name: 'root',
      uid: 'vd-uid',
      source: { pvc, readOnly: false, ...(migratingFrom === undefined ? {} : { migratingFrom }) },
      cdrom: false,
    });
    const onClaim = (devices: ResolvedDevice[]): InternalVirtualMachine =>
      buildInternalVM({ vm: vm(), vmClass, devices, ipAddress: undefined, runStrategy: 'Manual' });
    const claims = (k: InternalVirtualMachine | undefined): string[] =>
      (k?.spec.template.spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));

    it('hands the target claim to the running instance at once, with updateVolumesStrategy Migration, nothing awaiting a restart', async () => {
      const p = pass({ kvvm: onClaim([disk('old')]), kvvmi: kvvmi('Running') }, vm());
      p.state.devices = [disk('new', 'old')];
      await p.run();
      const stored = p.kinds.kvvms.stored('ns/web');
      expect(claims(stored)).toEqual(['new']);
      expect(stored?.spec.updateVolumesStrategy).toBe('Migration');
      expect(cond(p.state, 'ConfigurationApplied')).toMatchObject({ status: 'True' });
      expect(p.state.status.restartAwaitingChanges).toBeUndefined();
      expect(p.state.power.kind).toBe('none');
    });

    it('gives the source claim back at once when the migration is reverted, the strategy gone', async () => {
      const p = pass({ kvvm: onClaim([disk('new', 'old')]), kvvmi: kvvmi('Running') }, vm());
      p.state.devices = [disk('old')];
      await p.run();
      expect(claims(p.kinds.kvvms.stored('ns/web'))).toEqual(['old']);
      expect(p.kinds.kvvms.stored('ns/web')?.spec.updateVolumesStrategy).toBeUndefined();
    });

    it('holds a claim change for a restart when something else in the template changed too', async () => {
      const p = pass({ kvvm: onClaim([disk('old')]), kvvmi: kvvmi('Running') }, vm(bigger));
      p.state.devices = [disk('new', 'old')];
      await p.run();
      expect(claims(p.kinds.kvvms.stored('ns/web'))).toEqual(['old']);
      expect(cond(p.state, 'AwaitingRestartToApplyConfiguration')).toMatchObject({ status: 'True' });
    });
  });

  it('applies a change at once to an instance that already ended', async () => {
    const p = pass({ kvvm: applied(vm()), kvvmi: kvvmi('Succeeded') }, vm(bigger));
    await p.run();
    expect(JSON.parse(p.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[LAST_APPLIED_SPEC] ?? '{}')).toMatchObject({ memory: { size: '4Gi' } });
    expect(cond(p.state, 'ConfigurationApplied')).toMatchObject({ status: 'True' });
  });

  it('refuses to patch an internal VM someone wrote since it was read (a conflict, retried by the runner)', async () => {
    const p = pass({ kvvm: applied(vm()) }, vm(bigger));
    p.kinds.kvvms.writeByOther('ns/web', { metadata: { annotations: { other: 'x' } } });
    await expect(p.run()).rejects.toBeInstanceOf(ConflictError);
    expect(JSON.parse(p.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[LAST_APPLIED_SPEC] ?? '{}')).toMatchObject({ memory: { size: '2Gi' } });
  });

  describe('when virt-api refuses the internal VM', () => {
    const refusal = (): KubeApiError =>
      new KubeApiError('create: denied', 422, 'Invalid', {
        serverMessage:
          'admission webhook "virtualmachine-validator.kubevirt.io" denied the request: spec.template.spec.volumes[1].cloudInitNoCloud userdata exceeds 2048 byte limit.',
      });
    const clock = { t: 0 };
    const setup = (v = vm()) => {
      const p = pass({}, v);
      const refusals = new RefusalBackoff({ baseMs: 1000, maxMs: 60_000, now: () => clock.t });
      const handler = syncKvvmHandler(p.deps, refusals);
      return { ...p, go: (state = p.state) => handler.handle(state, handlerContext()) };
    };

    it('says why on the VM and asks for another look after the backoff, without failing the pass', async () => {
      clock.t = 0;
      const p = setup();
      p.kinds.kvvms.failNext = refusal();
      expect(await p.go()).toEqual({ requeueAfterMs: 1000 });
      expect(cond(p.state, 'KubeVirtReady')).toMatchObject({
        status: 'False',
        reason: 'InternalVirtualMachineRefused',
        message: 'KubeVirt refused the VM: Spec.provisioning.userData exceeds 2048 byte limit.',
      });
      expect(p.state.kvvm).toBeUndefined();
    });

    it('does not send the same object again before its time, however often the VM is looked at', async () => {
      clock.t = 0;
      const p = setup();
      p.kinds.kvvms.failNext = refusal();
      await p.go();
      for (const t of [10, 300, 999]) {
        clock.t = t;
        const again = initVMState(p.state.obj);
        Object.assign(again, { vmClass, devices: [], status: p.state.status });
        expect(await p.go(again)).toEqual({ requeueAfterMs: 1000 - t });
        expect(cond(again, 'KubeVirtReady')?.reason).toBe('InternalVirtualMachineRefused');
      }
      expect(p.kinds.kvvms.calls.filter((c) => c.verb === 'create')).toHaveLength(1);
      clock.t = 1000;
      p.kinds.kvvms.failNext = refusal();
      expect(await p.go()).toEqual({ requeueAfterMs: 2000 });
      expect(p.kinds.kvvms.calls.filter((c) => c.verb === 'create')).toHaveLength(2);
    });

    it('sends a changed VM at once, and drops the condition once KubeVirt takes it', async () => {
      clock.t = 0;
      const p = setup();
      p.kinds.kvvms.failNext = refusal();
      await p.go();
      const fixed = initVMState(vm({ memory: { size: '4Gi' } }));
      Object.assign(fixed, { vmClass, devices: [], status: p.state.status });
      expect(await p.go(fixed)).toBeUndefined();
      expect(p.kinds.kvvms.stored('ns/web')).toBeDefined();
      expect(cond(fixed, 'KubeVirtReady')).toBeUndefined();
    });

    it('still fails the pass on anything that is not a refusal (the runner retries it)', async () => {
      const p = setup();
      p.kinds.kvvms.failNext = new ConflictError('raced');
      await expect(p.go()).rejects.toBeInstanceOf(ConflictError);
      expect(cond(p.state, 'KubeVirtReady')).toBeUndefined();
    });
  });
});
