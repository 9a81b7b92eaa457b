/**
 * Evacuation, as a user meets it in a node drain: the eviction of a VM's launcher pod is refused by
 * KubeVirt's eviction interceptor (the simulator's, called by the real apiserver through a
 * ValidatingWebhookConfiguration on `pods/eviction`), the instance is marked with the node to leave,
 * the VM shows EvictionRequired, the controller creates an Evict operation named and marked as the
 * original's, and the VM ends up on the other node with the condition gone. Bad input: a pod that is
 * not a launcher is evicted untouched, a malformed eviction or review is refused naming the problem,
 * a VM that cannot migrate is refused and says why in Migratable.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { request } from 'node:https';
import { Finalizer } from '../../../shared/api/finalizers.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineOperation } from '../../../shared/api/resources/vmop.js';
import { KubeApiError } from '../../../shared/errors/index.js';
import type { KubeClient } from '../../../shared/kube/index.js';
import { EVACUATION_ANNOTATION, EVACUATION_PREFIX } from '../../../daemons/controller/reconcilers/evacuation/reconciler.js';
import { simulatorClients, type LauncherPod, type SimulatorClients } from '../../../platform/simulators/kubevirt-simulator/kube.js';
import { buildLauncherPod } from '../../../platform/simulators/kubevirt-simulator/launcher.js';
import {
  EVICTION_WEBHOOK_NAME,
  EVICTION_WEBHOOK_PATH,
  type EvictionInterceptor,
} from '../../../platform/simulators/kubevirt-simulator/virt-api/eviction-interceptor.js';
import { getTestEnv } from '../../env/index.js';
import { node } from './builders.js';
import { evictPod, startEvictionWebhook, type EvictionWebhook } from './eviction-webhook.js';
import { eventually, gone, mainKube } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-evac');
let kube: KubeClient;
let sim: SimulatorClients;
let webhook: EvictionWebhook | undefined;
let interceptor: EvictionInterceptor;
let caPem: string;
let otherNode: string;

const cond = (v: VirtualMachine, type: string): { status: string; reason?: string; message?: string } | undefined =>
  v.status?.conditions?.find((c) => c.type === type);
const evacuationOps = async (vmName: string): Promise<VirtualMachineOperation[]> =>
  (await t.c.vmops.list({ namespace: t.w.ns })).items.filter((o) => o.spec.virtualMachineName === vmName && o.spec.type === 'Evict');
const evict = (pod: string, opts: { dryRun?: boolean; body?: unknown } = {}): Promise<unknown> => evictPod(kube, t.w.ns, pod, opts);

const refusal = (answer: unknown): { status: number; message: string } | undefined =>
  answer instanceof KubeApiError ? { status: answer.status, message: answer.message } : undefined;

/** A launcher pod of the VM's instance on its node, as virt-controller makes it (the world plays no pods). */
async function launcherPodOf(vmName: string): Promise<LauncherPod> {
  const vmi = await t.c.kvvmis.get({ namespace: t.w.ns, name: vmName });
  const pod = buildLauncherPod(vmi);
  return sim.pods.create({ ...pod, spec: { ...(pod.spec ?? { containers: [] }), nodeName: vmi.status?.nodeName } });
}

async function runningVM(name: string): Promise<VirtualMachine> {
  await t.w.createVM(name, { runPolicy: 'AlwaysOn' });
  return t.w.vmWhen(name, (v) => phaseIs('Running')(v) && cond(v, 'Migratable')?.status === 'True', 'Running and migratable');
}

/** A running VM whose launcher pod a drain evicts (refused, 429): the evacuation operation made for it. */
async function drainedOperation(name: string): Promise<VirtualMachineOperation> {
  await runningVM(name);
  const pod = await launcherPodOf(name);
  expect(refusal(await evict(pod.metadata.name ?? ''))?.status).toBe(429);
  return eventually(async () => (await evacuationOps(name))[0], 'an Evict operation created');
}

beforeAll(async () => {
  kube = mainKube();
  sim = simulatorClients(kube);
  const dir = join(getTestEnv().workDir, `evacuation-${t.w.scope.id}`);
  webhook = await startEvictionWebhook(kube, { dir, name: `virt-launcher-eviction-${t.w.scope.id}`, namespace: t.w.ns, nodeName: t.w.nodeName });
  ({ interceptor, caPem } = webhook);
  otherNode = (await t.c.nodes.create(node(t.w.scope, 'node-2'))).metadata.name ?? '';
});

afterAll(async () => {
  await webhook?.stop();
  if (otherNode) await t.c.nodes.delete({ name: otherNode }).catch(() => undefined);
  kube?.close();
});

describe('evacuation of a VM whose launcher pod is evicted', () => {
  it('refuses the eviction (429), marks the instance, shows EvictionRequired, migrates the VM away with an Evict operation and clears the condition', async () => {
    await runningVM('drained');
    const pod = await launcherPodOf('drained');
    const podName = pod.metadata.name ?? '';

    const first = refusal(await evict(podName));
    expect(first?.status).toBe(429);
    expect(first?.message).toContain(`admission webhook "${EVICTION_WEBHOOK_NAME}" denied the request`);
    expect(first?.message).toContain(`Eviction triggered evacuation of VMI "${t.w.ns}/drained"`);
    // The guest was not killed: its pod stays, the instance is marked with the node it must leave.
    const kept = await sim.pods.get({ namespace: t.w.ns, name: podName });
    expect(kept.metadata.deletionTimestamp).toBeUndefined();
    expect((await t.c.kvvmis.get({ namespace: t.w.ns, name: 'drained' })).status?.evacuationNodeName).toBe(t.w.nodeName);

    const marked = await t.w.vmWhen('drained', (v) => cond(v, 'EvictionRequired')?.status === 'True', 'EvictionRequired');
    expect(cond(marked, 'EvictionRequired')).toMatchObject({
      reason: 'EvictionRequired',
      message: 'VirtualMachine should be evicted from current node or restarted.',
    });

    const [op] = await eventually(async () => {
      const ops = await evacuationOps('drained');
      return ops.length > 0 && ops;
    }, 'an Evict operation created');
    const opName = op?.metadata.name ?? '';
    expect(opName.startsWith(EVACUATION_PREFIX)).toBe(true);
    expect(op?.metadata.annotations?.[EVACUATION_ANNOTATION]).toBe('true');
    expect(op?.metadata.finalizers).toContain(Finalizer.vmopProtectionByEvacuationController);

    // A drain retries: the interceptor says the evacuation is under way.
    const again = refusal(await evict(podName));
    expect(again?.status).toBe(429);
    expect(again?.message).toContain(`Evacuation in progress: Eviction triggered evacuation of VMI "${t.w.ns}/drained"`);

    // The operation's migration runs (the world plays virt-handler by hand) and lands on the other node.
    const migration = `vmop-${opName}`;
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: migration }), 'the Evict operation created its migration');
    await t.w.kubevirt.completeMigration(migration, 'drained', otherNode);
    const done = await eventually(async () => {
      const got = await t.c.vmops.get({ namespace: t.w.ns, name: opName });
      return got.status?.phase === 'Completed' && got;
    }, 'the Evict operation Completed');
    const moved = await t.w.vmWhen('drained', (v) => cond(v, 'EvictionRequired') === undefined, 'EvictionRequired cleared');
    expect(moved.status?.nodeName).toBe(otherNode);
    expect((await t.c.kvvmis.get({ namespace: t.w.ns, name: 'drained' })).status?.evacuationNodeName).toBeUndefined();
    // The finished operation lets go of the evacuation finalizer, and no second one was made.
    await eventually(
      async () => !(await t.c.vmops.get({ namespace: t.w.ns, name: opName })).metadata.finalizers?.includes(Finalizer.vmopProtectionByEvacuationController),
      'evacuation finalizer removed',
    );
    expect(done.spec.type).toBe('Evict');
    expect(await evacuationOps('drained')).toHaveLength(1);
  });

  it('after an Evict operation fails, the next one waits for the backoff (2 s) instead of looping, and then evacuates the VM', async () => {
    const first = await drainedOperation('retried');
    const firstName = first.metadata.name ?? '';
    const migration = `vmop-${firstName}`;
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: migration }), 'its migration');
    await t.c.migrations.patchStatus({ namespace: t.w.ns, name: migration }, { phase: 'Failed' });
    const failed = await eventually(async () => {
      const got = await t.c.vmops.get({ namespace: t.w.ns, name: firstName });
      return got.status?.phase === 'Failed' && got;
    }, 'the first Evict operation Failed');
    const failedAt = Math.max(...(failed.status?.conditions ?? []).map((c) => Date.parse(c.lastTransitionTime ?? '')));
    // The instance is still marked: a second operation comes, but only after the backoff.
    const second = await eventually(async () => (await evacuationOps('retried')).find((o) => o.metadata.name !== firstName), 'a second Evict operation');
    expect(Date.parse(second.metadata.creationTimestamp ?? '') - failedAt).toBeGreaterThanOrEqual(2_000);
    expect(await evacuationOps('retried')).toHaveLength(2);
    const secondName = second.metadata.name ?? '';
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: `vmop-${secondName}` }), 'the second operation created its migration');
    await t.w.kubevirt.completeMigration(`vmop-${secondName}`, 'retried', otherNode);
    await eventually(async () => (await t.c.vmops.get({ namespace: t.w.ns, name: secondName })).status?.phase === 'Completed', 'the second Evict Completed');
    const moved = await t.w.vmWhen('retried', (v) => cond(v, 'EvictionRequired') === undefined, 'EvictionRequired cleared');
    expect(moved.status?.nodeName).toBe(otherNode);
    expect(await evacuationOps('retried')).toHaveLength(2);
  });

  it('deleting a pending evacuation operation cancels the evacuation', async () => {
    const op = await drainedOperation('cancelled');
    const opName = op.metadata.name ?? '';
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: `vmop-${opName}` }), 'its migration');
    await t.c.vmops.delete({ namespace: t.w.ns, name: opName });
    await eventually(() => gone(() => t.c.vmops.get({ namespace: t.w.ns, name: opName })), 'the deleted operation let go');
    await t.w.vmWhen('cancelled', (v) => cond(v, 'EvictionRequired') === undefined, 'EvictionRequired cleared');
    expect((await t.c.kvvmis.get({ namespace: t.w.ns, name: 'cancelled' })).status?.evacuationNodeName).toBeUndefined();
    expect(await evacuationOps('cancelled')).toHaveLength(0);
  });
});

describe('evacuation: bad input', () => {
  it('a pod that is not a launcher pod is evicted untouched: no VM is marked, no operation made', async () => {
    await sim.pods.create({
      metadata: { name: 'plain', namespace: t.w.ns, labels: { app: 'plain' } },
      spec: { nodeName: t.w.nodeName, containers: [{ name: 'c', image: 'plain' }] },
    });
    const before = interceptor.reviews;
    const opsBefore = (await t.c.vmops.list({ namespace: t.w.ns })).items.length;
    const answer = await evict('plain');
    expect(refusal(answer)).toBeUndefined();
    expect(await gone(() => sim.pods.get({ namespace: t.w.ns, name: 'plain' }))).toBe(true);
    expect(interceptor.reviews).toBeGreaterThan(before);
    expect((await t.c.kvvmis.list({ namespace: t.w.ns })).items.filter((i) => (i.status?.evacuationNodeName ?? '') !== '')).toHaveLength(0);
    expect((await t.c.vmops.list({ namespace: t.w.ns })).items.length).toBe(opsBefore);
  });

  it('a malformed eviction is refused by the apiserver naming the problem, and the launcher pod stays', async () => {
    await runningVM('malformed');
    const pod = await launcherPodOf('malformed');
    const podName = pod.metadata.name ?? '';
    const wrongName = refusal(await evict(podName, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'someone-else' } } }));
    expect(wrongName?.status).toBe(400);
    expect(wrongName?.message).toMatch(/name in URL does not match name in Eviction object/);
    const notEviction = refusal(await evict(podName, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: podName } } }));
    expect(notEviction?.status).toBe(400);
    expect((await sim.pods.get({ namespace: t.w.ns, name: podName })).metadata.deletionTimestamp).toBeUndefined();
    expect((await t.c.kvvmis.get({ namespace: t.w.ns, name: 'malformed' })).status?.evacuationNodeName).toBeUndefined();
  });

  it('a malformed AdmissionReview is a 400 naming each problem, and the interceptor keeps serving', async () => {
    const post = (body: string): Promise<{ status: number; text: string }> =>
      new Promise((resolve, reject) => {
        const req = request(
          `${interceptor.url}${EVICTION_WEBHOOK_PATH}`,
          { method: 'POST', ca: caPem, headers: { 'Content-Type': 'application/json' } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const notJson = await post('{not json');
    expect(notJson.status).toBe(400);
    expect(notJson.text).toContain('invalid AdmissionReview: body is not JSON');
    const noUid = await post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { name: 'p', namespace: t.w.ns } }));
    expect(noUid.status).toBe(400);
    expect(noUid.text).toContain('request.uid');
    const wrongKind = await post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'Eviction', request: { uid: 'u', name: 'p', namespace: t.w.ns } }));
    expect(wrongKind.text).toContain('kind');
    // Still serving: a well-formed review of a missing pod is allowed.
    const ok = await post(
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-1', name: 'missing', namespace: t.w.ns } }),
    );
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({ response: { uid: 'u-1', allowed: true } });
  });

  it('a VM that cannot live-migrate is refused (429) without being marked, and Migratable says why', async () => {
    await runningVM('pinned');
    // The node agent reports what KubeVirt finds: a disk that cannot move.
    // Written on the version read (a writer in between makes it read again), until the instance shows it.
    const notMigratable = await eventually(async () => {
      const vmi = await t.c.kvvmis.get({ namespace: t.w.ns, name: 'pinned' });
      const live = vmi.status?.conditions?.find((c) => c.type === 'LiveMigratable');
      if (live?.status === 'False') return vmi;
      const others = (vmi.status?.conditions ?? []).filter((c) => c.type !== 'LiveMigratable');
      await t.c.kvvmis.mergePatch(
        { namespace: t.w.ns, name: 'pinned' },
        {
          metadata: { resourceVersion: vmi.metadata.resourceVersion },
          status: { conditions: [...others, { type: 'LiveMigratable', status: 'False', reason: 'DisksNotLiveMigratable', message: 'PVC root is not shared' }] },
        },
      );
      return undefined;
    }, 'the instance not live-migratable');
    const pinned = await t.w.vmWhen('pinned', (v) => cond(v, 'Migratable')?.status === 'False', 'not migratable');
    const pod = await launcherPodOf('pinned');
    const answer = refusal(await evict(pod.metadata.name ?? ''));
    // On failure: what the interceptor judged by (the instance then), beside what it was when marked.
    const judged = await t.c.kvvmis.get({ namespace: t.w.ns, name: 'pinned' });
    expect({ status: answer?.status, uid: judged.metadata.uid, conditions: judged.status?.conditions?.map((c) => `${c.type}=${c.status}`) }).toEqual({
      status: 429,
      uid: notMigratable.metadata.uid,
      conditions: expect.arrayContaining(['LiveMigratable=False']) as unknown,
    });
    expect(answer?.message).toContain('VMI pinned is configured with an eviction strategy but is not live-migratable');
    expect(cond(pinned, 'Migratable')).toMatchObject({ reason: 'DisksNotMigratable' });
    expect(cond(pinned, 'Migratable')?.message).toMatch(/ReadWriteMany/);
    expect((await t.c.kvvmis.get({ namespace: t.w.ns, name: 'pinned' })).status?.evacuationNodeName).toBeUndefined();
    expect((await sim.pods.get({ namespace: t.w.ns, name: pod.metadata.name ?? '' })).metadata.deletionTimestamp).toBeUndefined();
    expect(cond(await t.c.vms.get({ namespace: t.w.ns, name: 'pinned' }), 'EvictionRequired')).toBeUndefined();
    expect(await evacuationOps('pinned')).toHaveLength(0);
  });
});
