/**
 * The volume populator against the real apiserver and kube-controller-manager: a claim annotated as
 * the original annotates the claims it fills (`pvc-population-strategy: dvcr`, the DVCR image, a
 * `dataSourceRef` in virtualization.deckhouse.io) is left unprovisioned by the storage (SIMULATED, as
 * an external provisioner leaves a populator's claims), filled through `<claim>-prime` by the real
 * importer program from a real registry, handed the filled volume, and marked done; a Block claim is
 * filled as a device. Bad input (a dataSourceRef of another kind, a source that does not exist or
 * goes away while filling) leaves the claim unfilled, never marked done, with a Warning Event.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { ClusterVirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import { Informer, eventDescriptor, eventSchema, type KubeClient } from '../../../../shared/kube/index.js';
import { makeImage } from '../../../../shared/testing/disk-images.js';
import type { Clients } from '../../../../daemons/controller/kube/resources.js';
import { DONE_ANNOTATION, SOURCE_DVCR_ANNOTATION, STRATEGY_ANNOTATION } from '../../../../daemons/controller/reconcilers/populator/annotations.js';
import { makeStorageClients, type HelperPod, type PVC, type StorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';
import { startImportRig, type ImportRig } from './import-rig.js';
import { freshNamespace } from '../../../env/index.js';
import { SCOPE_LABEL, TEST_FIELD_MANAGER, eventually, gone, mainKube, newScope, testClients, type Scope } from '../fixtures.js';

const IMPORT = 120_000;
jest.setTimeout(3 * IMPORT);

let kube: KubeClient;
let c: Clients;
let sc: StorageClients;
let scope: Scope;
let ns: string;
let rig: ImportRig;
let storageClass: string;
let pods: Informer<HelperPod>;
/** Every helper Pod spec seen (they are deleted once done). */
const seenPods = new Map<string, HelperPod>();
let cvi: ClusterVirtualImage;
/** The raw bytes the image converts to. */
let rawSha256: string;

beforeAll(async () => {
  kube = mainKube();
  c = testClients(kube);
  sc = makeStorageClients(kube, TEST_FIELD_MANAGER);
  scope = newScope(await freshNamespace('populator'));
  ns = scope.namespace;
  pods = new Informer<HelperPod>({ client: sc.helperPods, namespace: ns });
  pods.on('add', (p) => {
    seenPods.set(p.metadata.name ?? '', p);
  });
  pods.start();
  await pods.synced;
  rig = await startImportRig({
    kube,
    sc,
    scope,
    classPrefix: 'populator',
    // A provisioner the StorageProfile table knows for Block; the simulated backend gives what it states.
    classSpec: {
      provisioner: 'replicated.csi.storage.deckhouse.io',
      parameters: { accessModes: 'ReadWriteMany,ReadWriteOnce', volumeModes: 'Filesystem,Block' },
    },
    makeFiles(dir) {
      makeImage(dir, 'disk.qcow2', 'qcow2', 24);
      execFileSync('qemu-img', ['convert', '-f', 'qcow2', '-O', 'raw', join(dir, 'disk.qcow2'), join(dir, 'disk.raw')]);
    },
  });
  storageClass = rig.storageClass;
  rawSha256 = sha256(readFileSync(join(rig.filesDir, 'disk.raw')));
  cvi = await c.clusterImages.create({
    apiVersion: API_VERSION,
    kind: 'ClusterVirtualImage',
    metadata: { name: `pop-${scope.id}`, labels: { [SCOPE_LABEL]: scope.id } },
    spec: { dataSource: { type: 'HTTP', http: { url: `${rig.files.url}/disk.qcow2` } } },
  });
  cvi = await eventually(
    async () => {
      const got = await c.clusterImages.get({ name: cvi.metadata.name ?? '' });
      return got.status?.phase === 'Ready' && got;
    },
    'the ClusterVirtualImage Ready in DVCR',
    IMPORT,
  );
});

afterAll(async () => {
  await c.clusterImages.delete({ name: cvi.metadata.name ?? '' }).catch(() => undefined);
  await rig.stop();
  await pods.stop();
  kube.close();
});

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A claim as the original annotates one it fills from DVCR, naming `ref` as its populator source. */
function populated(name: string, ref: { apiGroup?: string; kind: string; name: string }, volumeMode = 'Filesystem', image?: string): PVC {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: ns,
      annotations: { [STRATEGY_ANNOTATION]: 'dvcr', [SOURCE_DVCR_ANNOTATION]: `docker://${image ?? cvi.status?.target?.registryURL ?? ''}` },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      volumeMode,
      storageClassName: storageClass,
      resources: { requests: { storage: '32Mi' } },
      dataSourceRef: { apiGroup: 'virtualization.deckhouse.io', ...ref },
    },
  };
}

const claim = (name: string): Promise<PVC> => sc.pvcs.get({ namespace: ns, name });

/** The data the claim's volume holds: its directory's disk.img (a file, or the stand-in of a Block device). */
async function contentOf(pvc: PVC): Promise<Buffer> {
  const pv = await kube
    .resource({ group: '', version: 'v1', plural: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false }, PVSchemaForTest, TEST_FIELD_MANAGER)
    .get({ name: pvc.spec.volumeName ?? '' });
  return readFileSync(join(pv.spec.hostPath?.path ?? '', 'disk.img'));
}

const PVSchemaForTest = z.looseObject({ metadata: ObjectMetaSchema, spec: z.looseObject({ hostPath: z.looseObject({ path: z.string() }).optional() }) });

async function warningOn(name: string, match: RegExp): Promise<string> {
  const events = kube.resource(eventDescriptor, eventSchema, TEST_FIELD_MANAGER);
  return eventually(
    async () => {
      const list = await events.list({ namespace: ns });
      return list.items.find((e) => e.regarding?.name === name && e.reason === 'PopulationFailed' && match.test(e.note ?? ''))?.note;
    },
    `a PopulationFailed Event on ${name} matching ${String(match)}`,
  );
}

async function filledAndDone(name: string): Promise<PVC> {
  return eventually(
    async () => {
      const got = await claim(name);
      return got.status?.phase === 'Bound' && got.metadata.annotations?.[DONE_ANNOTATION] === 'true' && got;
    },
    `claim ${name} Bound and marked done`,
    IMPORT,
  );
}

describe('the volume populator', () => {
  it('fills a claim naming a ClusterVirtualImage from DVCR through its prime claim, hands it the volume and marks it done', async () => {
    await sc.pvcs.create(populated('from-dvcr', { kind: 'ClusterVirtualImage', name: cvi.metadata.name ?? '' }));
    // The storage leaves the claim to the populator; the populator provisions and fills the prime.
    const prime = await eventually(() => claim('from-dvcr-prime').catch(() => undefined), 'the prime claim');
    expect(prime.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'PersistentVolumeClaim', name: 'from-dvcr', controller: true });
    expect(prime.spec.dataSourceRef).toBeUndefined();
    const done = await filledAndDone('from-dvcr');
    expect(sha256((await contentOf(done)).subarray(0, 24 << 20))).toBe(rawSha256);
    expect(await eventually(() => gone(() => claim('from-dvcr-prime')), 'the prime deleted')).toBe(true);
    expect(await eventually(() => gone(() => sc.helperPods.get({ namespace: ns, name: 'd8v-pvc-pvc-from-dvcr' })), 'the importer deleted')).toBe(true);
    const pod = seenPods.get('d8v-pvc-pvc-from-dvcr');
    expect(JSON.stringify(pod?.spec)).toContain('"claimName":"from-dvcr-prime"');
  });

  it('fills a Block claim as a device: the importer has the prime in volumeDevices and writes the device', async () => {
    await sc.pvcs.create(populated('block', { kind: 'ClusterVirtualImage', name: cvi.metadata.name ?? '' }, 'Block'));
    const done = await filledAndDone('block');
    expect(done.spec.volumeMode).toBe('Block');
    const container = (
      seenPods.get('d8v-pvc-pvc-block')?.spec as {
        containers: { volumeDevices?: unknown; volumeMounts?: { name: string }[]; env: { name: string; value: string }[] }[];
      }
    ).containers[0];
    expect(container?.volumeDevices).toEqual([{ name: 'data', devicePath: '/dev/pvc-importer-block-volume' }]);
    expect((container?.volumeMounts ?? []).map((m) => m.name)).not.toContain('data');
    expect(container?.env).toEqual(expect.arrayContaining([{ name: 'IMPORTER_DESTINATION_DEVICE', value: '/dev/pvc-importer-block-volume' }]));
    const device = await contentOf(done);
    expect(device.length).toBe(32 << 20);
    expect(sha256(device.subarray(0, 24 << 20))).toBe(rawSha256);
  });

  it('refuses a dataSourceRef of another kind: a Warning Event names it, the claim is never filled or marked', async () => {
    await sc.pvcs.create(populated('wrong-kind', { kind: 'VirtualMachine', name: 'vm' }));
    expect(await warningOn('wrong-kind', /VirtualMachine/)).toMatch(/must be a virtualization\.deckhouse\.io VirtualImage, ClusterVirtualImage or VirtualDisk/);
    const got = await claim('wrong-kind');
    expect([got.status?.phase, got.metadata.annotations?.[DONE_ANNOTATION]]).toEqual(['Pending', undefined]);
    expect(await gone(() => claim('wrong-kind-prime'))).toBe(true);
  });

  it('leaves a claim whose source does not exist unfilled, and fills it once the source appears', async () => {
    const late = `late-${scope.id}`;
    await sc.pvcs.create(populated('missing-source', { kind: 'ClusterVirtualImage', name: late }));
    expect(await warningOn('missing-source', /does not exist/)).toContain(`ClusterVirtualImage ${late}`);
    expect(await gone(() => claim('missing-source-prime'))).toBe(true);
    // The source named is an object, not just the image: once it exists the claim goes on.
    await c.clusterImages.create({ ...cvi, metadata: { name: late, labels: { [SCOPE_LABEL]: scope.id } }, status: undefined });
    try {
      const done = await filledAndDone('missing-source');
      expect(sha256((await contentOf(done)).subarray(0, 24 << 20))).toBe(rawSha256);
    } finally {
      await c.clusterImages.delete({ name: late }).catch(() => undefined);
    }
  });

  it('stops filling when the source goes away: importer and prime deleted, the claim reported and never marked done', async () => {
    const doomed = `doomed-${scope.id}`;
    await c.clusterImages.create({ ...cvi, metadata: { name: doomed, labels: { [SCOPE_LABEL]: scope.id } }, status: undefined });
    await sc.pvcs.create(populated('orphan', { kind: 'ClusterVirtualImage', name: doomed }));
    await eventually(() => claim('orphan-prime').catch(() => undefined), 'filling started (the prime made)');
    await c.clusterImages.delete({ name: doomed });
    expect(await warningOn('orphan', /does not exist|disappeared/)).toContain(doomed);
    expect(await eventually(() => gone(() => claim('orphan-prime')), 'the prime deleted')).toBe(true);
    const got = await claim('orphan');
    expect(got.metadata.annotations?.[DONE_ANNOTATION]).toBeUndefined();
    expect(got.status?.phase).toBe('Pending');
  });

  it('a VirtualDisk on a Block claim: its importer Pod has the claim in volumeDevices, and the device holds the image', async () => {
    await c.disks.create({
      apiVersion: API_VERSION,
      kind: 'VirtualDisk',
      metadata: { name: 'blk-disk', namespace: ns, annotations: { 'virtualdisk.virtualization.deckhouse.io/volume-mode': 'Block' } },
      spec: {
        dataSource: { type: 'ObjectRef', objectRef: { kind: 'ClusterVirtualImage', name: cvi.metadata.name ?? '' } },
        persistentVolumeClaim: { storageClassName: storageClass },
      },
    });
    const vd = await eventually(
      async () => {
        const got = await c.disks.get({ namespace: ns, name: 'blk-disk' });
        return got.status?.phase === 'Ready' && got;
      },
      'the disk Ready',
      IMPORT,
    );
    const pvc = await claim(vd.status?.target?.persistentVolumeClaimName ?? '');
    expect(pvc.spec.volumeMode).toBe('Block');
    const container = (
      seenPods.get('d8v-pvc-vd-blk-disk')?.spec as { containers: { volumeDevices?: unknown; volumeMounts?: { name: string }[] }[] } | undefined
    )?.containers[0];
    expect(container?.volumeDevices).toEqual([{ name: 'data', devicePath: '/dev/pvc-importer-block-volume' }]);
    expect((container?.volumeMounts ?? []).map((m) => m.name)).not.toContain('data');
    expect(sha256((await contentOf(pvc)).subarray(0, 24 << 20))).toBe(rawSha256);
  });
});
