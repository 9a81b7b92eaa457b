/**
 * The storage simulator against the real apiserver (and kube-controller-manager's volume binder):
 * helper pods run as the real importer program with a loopback pod IP, their end reported as a
 * kubelet would (exit code, termination message), PVC mounts mapped to the volume's directory, a
 * deleted pod's program stopped; claims of its storage class get a directory volume, deleted with
 * the directory once released; other pods and other classes' claims are left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { makeImage } from '../../../shared/testing/disk-images.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { HELPER_POD_SELECTOR } from '../../../platform/simulators/storage-simulator/config.js';
import {
  SELECTED_NODE,
  SIMULATED_RWX_CLASS,
  SIMULATED_STORAGE_CLASS,
  SIMULATED_STORAGE_CLASSES,
  SIMULATED_WFFC_CLASS,
} from '../../../platform/simulators/storage-simulator/classes.js';
import { storageSimulatorClients, type Pod, type PVC } from '../../../platform/simulators/storage-simulator/kube.js';
import { StorageSimulator } from '../../../platform/simulators/storage-simulator/simulator.js';
import { freshNamespace, newKubeConfig } from '../../env/index.js';

const StatusSchema = z.looseObject({
  phase: z.string().optional(),
  podIP: z.string().optional(),
  containerStatuses: z
    .array(z.looseObject({ state: z.looseObject({ terminated: z.looseObject({ exitCode: z.number(), message: z.string().optional() }).optional() }) }))
    .optional(),
});
const StorageClassSchema = z.looseObject({ apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema });
const WAIT = { timeoutMs: 60_000, intervalMs: 100 };

let kube: KubeClient;
let ns: string;
let storageClass: string;
let volumesDir: string;
let imagesDir: string;
let sim: StorageSimulator;
/** A class of the local platform under this run's name. */
const local = (name: string): string => `${name}-${ns}`;
const c = (): ReturnType<typeof storageSimulatorClients> => storageSimulatorClients(kube);
const classes = (): ReturnType<KubeClient['resource']> =>
  kube.resource({ group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', kind: 'StorageClass', namespaced: false }, StorageClassSchema, 'test');

beforeAll(async () => {
  kube = new KubeClient(newKubeConfig());
  ns = await freshNamespace('storage-sim');
  storageClass = `sim-${ns}`;
  await classes().create({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: storageClass },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'Immediate',
  } as never);
  volumesDir = mkdtempSync(join(tmpdir(), 'storage-sim-volumes-'));
  imagesDir = mkdtempSync(join(tmpdir(), 'storage-sim-images-'));
  // The local platform's classes as npm start makes them, under names of this run (no default among them).
  for (const m of SIMULATED_STORAGE_CLASSES) {
    const meta = m['metadata'] as { name: string };
    await classes().create({ ...m, metadata: { name: local(meta.name) } });
  }
  const all = [storageClass, ...SIMULATED_STORAGE_CLASSES.map((m) => local((m['metadata'] as { name: string }).name))];
  sim = new StorageSimulator(kube, { volumesDir, storageClasses: all, namespace: ns, requireNode: false });
  await sim.start();
});

afterAll(async () => {
  await sim.stop();
  for (const name of [storageClass, local(SIMULATED_STORAGE_CLASS), local(SIMULATED_RWX_CLASS), local(SIMULATED_WFFC_CLASS)])
    await classes()
      .delete({ name })
      .catch(() => undefined);
  kube.close();
  rmSync(volumesDir, { recursive: true, force: true });
  rmSync(imagesDir, { recursive: true, force: true });
});

function helperPod(name: string, env: Record<string, string>, claim?: string, labelled = true): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, ...(labelled ? { labels: { [HELPER_POD_SELECTOR]: 'import' } } : {}) },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'importer',
          image: 'virtualization-importer',
          env: Object.entries(env).map(([k, v]) => ({ name: k, value: v })),
          ...(claim !== undefined ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
          terminationMessagePath: '/dev/termination-log',
        },
      ],
      ...(claim !== undefined ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] } : {}),
    },
  };
}

function claim(name: string, cls: string, modes: { accessModes?: string[]; volumeMode?: string } = {}): PVC {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns },
    spec: {
      storageClassName: cls,
      accessModes: modes.accessModes ?? ['ReadWriteOnce'],
      ...(modes.volumeMode === undefined ? {} : { volumeMode: modes.volumeMode }),
      resources: { requests: { storage: '64Mi' } },
    },
  };
}

const boundClaim = (name: string): Promise<PVC> =>
  waitFor(
    `claim ${name} Bound`,
    async () => {
      const pvc = await c().pvcs.get({ namespace: ns, name });
      return pvc.status?.phase === 'Bound' && pvc;
    },
    WAIT,
  );

async function statusOf(name: string): Promise<z.infer<typeof StatusSchema>> {
  const pod = await c().pods.get({ namespace: ns, name });
  return StatusSchema.parse(pod.status ?? {});
}

const gone = async (read: () => Promise<unknown>): Promise<boolean> =>
  read().then(
    () => false,
    (err: unknown) => err instanceof NotFoundError,
  );

describe('the kubelet part', () => {
  it('runs a helper pod with a loopback pod IP and reports a broken configuration as the container would end: Failed, exit 2, the result as termination message', async () => {
    await c().pods.create(helperPod('bad-config', { IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'not a url', IMPORTER_DESTINATION_PATH: '/tmp/x' }));
    const st = await waitFor('the pod Failed', async () => ((await statusOf('bad-config')).phase === 'Failed' ? statusOf('bad-config') : undefined), WAIT);
    expect(st.podIP).toMatch(/^127\.\d+\.\d+\.\d+$/);
    const term = st.containerStatuses?.[0]?.state.terminated;
    expect(term?.exitCode).toBe(2);
    expect(JSON.parse(term?.message ?? '{}')).toMatchObject({ phase: 'Failed', reason: 'InvalidConfiguration' });
    expect(term?.message).toMatch(/IMPORTER_ENDPOINT/);
  });

  it('leaves pods without the helper label to others', async () => {
    await c().pods.create(helperPod('not-ours', { IMPORTER_SOURCE: 'upload', IMPORTER_DESTINATION_PATH: '/tmp/y' }, undefined, false));
    await c().pods.create(helperPod('marker', { IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'bogus', IMPORTER_DESTINATION_PATH: '/tmp/z' }));
    await waitFor('the labelled pod done', async () => (await statusOf('marker')).phase === 'Failed', WAIT);
    const untouched = await statusOf('not-ours');
    expect(untouched.phase).toBe('Pending');
    expect(untouched.podIP).toBeUndefined();
    expect(sim.runs.some((r) => r.pod === 'not-ours')).toBe(false);
  });

  it('mounts the claim as its volume directory: an upload lands in it and the pod Succeeds', async () => {
    await c().pvcs.create(claim('up', storageClass));
    await c().pods.create(helperPod('uploader', { IMPORTER_SOURCE: 'upload', UPLOADER_PORT: '8444', IMPORTER_DESTINATION_PATH: '/data/disk.img' }, 'up'));
    const address = await waitFor('the uploader listening on its pod IP', () => sim.uploadAddress('uploader'), WAIT);
    expect(address).toMatch(/^127\.\d+\.\d+\.\d+:8444$/);
    expect(address.startsWith(`${(await statusOf('uploader')).podIP ?? '?'}:`)).toBe(true);
    const image = makeImage(imagesDir, 'up.raw', 'raw', 4);
    const res = await fetch(`http://${address}/upload`, { method: 'PUT', body: readFileSync(image) });
    expect(res.status).toBe(200);
    await waitFor('the uploader Succeeded', async () => (await statusOf('uploader')).phase === 'Succeeded', WAIT);
    const file = join(sim.dirOf(ns, 'up'), 'disk.img');
    expect(readFileSync(file).equals(readFileSync(image))).toBe(true);
  });

  it('gives a Block claim as a device: the file standing in for it, at the claim size, is written in place and the pod Succeeds', async () => {
    await c().pvcs.create(claim('blk', storageClass, { volumeMode: 'Block' }));
    const pod = helperPod('to-device', { IMPORTER_SOURCE: 'upload', UPLOADER_PORT: '8444', IMPORTER_DESTINATION_DEVICE: '/dev/pvc-importer-block-volume' });
    const container = pod.spec.containers[0];
    if (container === undefined) throw new Error('no container');
    container.volumeDevices = [{ name: 'data', devicePath: '/dev/pvc-importer-block-volume' }];
    pod.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'blk' } }];
    await c().pods.create(pod);
    const address = await waitFor('the uploader listening', () => sim.uploadAddress('to-device'), WAIT);
    const image = makeImage(imagesDir, 'blk.raw', 'raw', 4);
    expect((await fetch(`http://${address}/upload`, { method: 'PUT', body: readFileSync(image) })).status).toBe(200);
    await waitFor('the pod Succeeded', async () => (await statusOf('to-device')).phase === 'Succeeded', WAIT);
    const device = readFileSync(join(sim.dirOf(ns, 'blk'), 'disk.img'));
    expect(device.length).toBe(64 << 20);
    expect(device.subarray(0, 4 << 20).equals(readFileSync(image))).toBe(true);
    expect(sim.runs.find((r) => r.pod === 'to-device')?.result).toMatchObject({ destination: { path: expect.stringMatching(/\/disk\.img$/) as unknown } });
  });

  it('stops the program of a pod deleted while it runs', async () => {
    await c().pods.create(helperPod('waiting', { IMPORTER_SOURCE: 'upload', UPLOADER_PORT: '8444', IMPORTER_DESTINATION_PATH: '/tmp/never' }));
    await waitFor('the uploader listening', () => sim.uploadAddress('waiting'), WAIT);
    await c().pods.delete({ namespace: ns, name: 'waiting' });
    const run = await waitFor('the program ended', () => sim.runs.find((r) => r.pod === 'waiting'), WAIT);
    expect(run.code).not.toBe(0);
    expect(run.result).toMatchObject({ phase: 'Failed', reason: 'Interrupted' });
  });

  it('does not start a pod whose claim is not bound yet', async () => {
    await c().pvcs.create(claim('foreign', `other-${storageClass}`));
    await c().pods.create(helperPod('blocked', { IMPORTER_SOURCE: 'upload', IMPORTER_DESTINATION_PATH: '/data/disk.img' }, 'foreign'));
    // A labelled pod created after it has run: the simulator has seen both.
    await c().pods.create(helperPod('marker-2', { IMPORTER_SOURCE: 'http', IMPORTER_ENDPOINT: 'bogus', IMPORTER_DESTINATION_PATH: '/tmp/z' }));
    await waitFor('the later pod done', async () => (await statusOf('marker-2')).phase === 'Failed', WAIT);
    expect((await statusOf('blocked')).podIP).toBeUndefined();
    expect((await c().pvcs.get({ namespace: ns, name: 'foreign' })).spec.volumeName).toBeUndefined();
  });
});

describe('the provisioner part', () => {
  it('gives a claim of its class a pre-bound directory volume, and deletes volume and directory once the claim is gone', async () => {
    await c().pvcs.create(claim('vol', storageClass));
    const bound = await waitFor(
      'the claim Bound',
      async () => {
        const pvc = await c().pvcs.get({ namespace: ns, name: 'vol' });
        return pvc.status?.phase === 'Bound' && pvc;
      },
      WAIT,
    );
    const pvName = bound.spec.volumeName ?? '';
    const pv = await c().pvs.get({ name: pvName });
    expect(pvName).toBe(`pvc-${bound.metadata.uid ?? ''}`);
    expect(pv.spec.hostPath?.path).toBe(join(volumesDir, ns, 'vol'));
    expect(existsSync(join(volumesDir, ns, 'vol'))).toBe(true);
    await c().pvcs.delete({ namespace: ns, name: 'vol' });
    await waitFor('the volume deleted', () => gone(() => c().pvs.get({ name: pvName })), WAIT);
    await waitFor('its directory removed', () => !existsSync(join(volumesDir, ns, 'vol')), WAIT);
  });

  it('the RWX class gives a ReadWriteMany Block claim its volume; the RWO class gives that claim none and a ProvisioningFailed Event naming the mode', async () => {
    const rwxBlock = { accessModes: ['ReadWriteMany'], volumeMode: 'Block' };
    await c().pvcs.create(claim('shared', local(SIMULATED_RWX_CLASS), rwxBlock));
    const bound = await boundClaim('shared');
    const pv = (await c().pvs.get({ name: bound.spec.volumeName ?? '' })) as PVC & { spec: { accessModes?: string[]; volumeMode?: string } };
    expect([pv.spec.accessModes, pv.spec.volumeMode]).toEqual([['ReadWriteMany'], 'Block']);

    await c().pvcs.create(claim('not-shared', local(SIMULATED_STORAGE_CLASS), rwxBlock));
    const event = await waitFor(
      'a ProvisioningFailed Event on the claim',
      async () =>
        (await c().events.list({ namespace: ns })).items.find(
          (e) => e.regarding?.name === 'not-shared' && e.reason === 'ProvisioningFailed' && e.reportingController === 'storage-simulator',
        ),
      WAIT,
    );
    expect(event).toMatchObject({ type: 'Warning', note: expect.stringContaining('cannot give access mode ReadWriteMany') as unknown });
    expect((await c().pvcs.get({ namespace: ns, name: 'not-shared' })).spec.volumeName ?? '').toBe('');
    expect((await c().pvs.list()).items.some((v) => v.spec.claimRef?.name === 'not-shared')).toBe(false);
  });

  it('a WaitForFirstConsumer claim waits for the node the scheduler picks, then gets a volume pinned to that node', async () => {
    await c().pvcs.create(claim('late', local(SIMULATED_WFFC_CLASS)));
    // Nothing is made while no consumer is scheduled (the other claims of this run are served meanwhile).
    await c().pvcs.create(claim('early', local(SIMULATED_STORAGE_CLASS)));
    await boundClaim('early');
    expect((await c().pvs.list()).items.some((v) => v.spec.claimRef?.name === 'late')).toBe(false);
    // The scheduler's part: the consumer pod placed on node-a.
    await c().pvcs.mergePatch({ namespace: ns, name: 'late' }, { metadata: { annotations: { [SELECTED_NODE]: 'node-a' } } });
    const bound = await boundClaim('late');
    const pv = (await c().pvs.get({ name: bound.spec.volumeName ?? '' })) as { spec: { nodeAffinity?: unknown } };
    expect(pv.spec.nodeAffinity).toEqual({
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-a'] }] }] },
    });
  });
});
