/**
 * StorageProfiles against the real apiserver: one per StorageClass (made when a class appears, deleted
 * when it goes), stating the claim property sets known for the class's provisioner; disks on PVC made
 * with the profile's modes, a user's edit honoured, and an edit to a volume mode the class cannot give
 * stopping only the disks of that class, with a condition naming the profile and the mode.
 * Claims get volumes from the storage simulator (SIMULATED), kube-controller-manager binds them.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { KubeClient } from '../../../../shared/kube/index.js';
import { startController, type RunningController } from '../../../../daemons/controller/controller.js';
import type { Clients } from '../../../../daemons/controller/kube/resources.js';
import { makeStorageClients, type StorageClass, type StorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';
import { StorageSimulator } from '../../../../platform/simulators/storage-simulator/simulator.js';
import { freshNamespace } from '../../../env/index.js';
import { SCOPE_LABEL, TEST_FIELD_MANAGER, controllerConfig, eventually, gone, mainKube, newScope, testClients, type Scope } from '../fixtures.js';

jest.setTimeout(120_000);

let kube: KubeClient;
let c: Clients;
let sc: StorageClients;
let scope: Scope;
let ns: string;
let storage: StorageSimulator;
let volumesDir: string;
let ctl: { running: RunningController; abort: AbortController };
/** A class of a provisioner the table knows as ReadWriteMany Filesystem only. */
let nfs: string;
/** A class of Deckhouse's replicated storage (ReadWriteMany Block first). */
let replicated: string;

const storageClass = (name: string, provisioner: string, parameters: Record<string, string>): StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name, labels: { [SCOPE_LABEL]: scope.id } },
  provisioner,
  volumeBindingMode: 'Immediate',
  parameters,
});

beforeAll(async () => {
  kube = mainKube();
  c = testClients(kube);
  sc = makeStorageClients(kube, TEST_FIELD_MANAGER);
  scope = newScope(await freshNamespace('profiles'));
  ns = scope.namespace;
  nfs = `nfs-${scope.id}`;
  replicated = `replicated-${scope.id}`;
  // What the simulated backend gives per class (the simulator's parameters), matching what the provisioner is known for.
  await sc.storageClasses.create(storageClass(nfs, 'nfs.csi.k8s.io', { accessModes: 'ReadWriteMany,ReadWriteOnce', volumeModes: 'Filesystem' }));
  await sc.storageClasses.create(
    storageClass(replicated, 'replicated.csi.storage.deckhouse.io', { accessModes: 'ReadWriteMany,ReadWriteOnce', volumeModes: 'Filesystem,Block' }),
  );
  volumesDir = mkdtempSync(join(tmpdir(), 'profiles-volumes-'));
  storage = new StorageSimulator(kube, { volumesDir, storageClasses: [nfs, replicated], namespace: ns, requireNode: false });
  await storage.start();
  const abort = new AbortController();
  const config = controllerConfig(scope, { STORAGE_RECONCILERS: 'true', POD_NAMESPACE: ns, DEPENDENCY_RECHECK_INTERVAL: '1s' });
  ctl = { running: await startController({ kube, config, signal: abort.signal }), abort };
});

afterAll(async () => {
  ctl.abort.abort();
  await ctl.running.stop();
  await storage.stop();
  rmSync(volumesDir, { recursive: true, force: true });
  for (const name of [nfs, replicated]) await sc.storageClasses.delete({ name }).catch(() => undefined);
  kube.close();
});

function blankDisk(name: string, cls: string): VirtualDisk {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualDisk',
    metadata: { name, namespace: ns },
    spec: { persistentVolumeClaim: { size: '8Mi', storageClassName: cls } },
  };
}

async function readyDisk(name: string): Promise<VirtualDisk> {
  return eventually(async () => {
    const d = await c.disks.get({ namespace: ns, name });
    return d.status?.phase === 'Ready' ? d : undefined;
  }, `disk ${name} Ready`);
}

async function claimOf(disk: VirtualDisk): Promise<{ accessModes?: string[] | undefined; volumeMode?: string | undefined }> {
  const pvc = await sc.pvcs.get({ namespace: ns, name: disk.status?.target?.persistentVolumeClaimName ?? '' });
  return { accessModes: pvc.spec.accessModes, volumeMode: pvc.spec.volumeMode };
}

describe('StorageProfiles', () => {
  it('a StorageClass gets a profile stating its provisioner and claim property sets; deleting the class deletes it', async () => {
    const profile = await eventually(async () => {
      const p = await sc.storageProfiles.get({ name: nfs }).catch(() => undefined);
      return p?.status?.claimPropertySets !== undefined ? p : undefined;
    }, 'the nfs class profile');
    expect(profile.status).toMatchObject({
      storageClass: nfs,
      provisioner: 'nfs.csi.k8s.io',
      claimPropertySets: [{ accessModes: ['ReadWriteMany'], volumeMode: 'Filesystem' }],
    });
    const extra = `extra-${scope.id}`;
    await sc.storageClasses.create(storageClass(extra, 'local.csi.storage.deckhouse.io', {}));
    const made = await eventually(() => sc.storageProfiles.get({ name: extra }).catch(() => undefined), 'the new class profile');
    expect(made.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('virtualization-controller');
    await sc.storageClasses.delete({ name: extra });
    await eventually(() => gone(() => sc.storageProfiles.get({ name: extra })), 'the profile deleted with its class');
  });

  it('a disk on PVC is made with the profile modes (ReadWriteMany Block on replicated storage)', async () => {
    await c.disks.create(blankDisk('rwx-block', replicated));
    expect(await claimOf(await readyDisk('rwx-block'))).toEqual({ accessModes: ['ReadWriteMany'], volumeMode: 'Block' });
  });

  it('a profile a user edits is honoured: later disks of its class get the edited modes', async () => {
    const p = await eventually(() => sc.storageProfiles.get({ name: replicated }).catch(() => undefined), 'the replicated profile');
    await sc.storageProfiles.mergePatch(
      { name: replicated },
      {
        spec: { claimPropertySets: [{ accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' }] },
        metadata: { resourceVersion: p.metadata.resourceVersion },
      },
    );
    await eventually(
      async () => (await sc.storageProfiles.get({ name: replicated })).status?.claimPropertySets?.[0]?.volumeMode === 'Filesystem',
      'status follows spec',
    );
    await c.disks.create(blankDisk('rwo-fs', replicated));
    expect(await claimOf(await readyDisk('rwo-fs'))).toEqual({ accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' });
    // Set back to what the provisioner is known for: an empty spec.
    await sc.storageProfiles.mergePatch({ name: replicated }, { spec: { claimPropertySets: null } });
    await eventually(
      async () => (await sc.storageProfiles.get({ name: replicated })).status?.claimPropertySets?.[0]?.volumeMode === 'Block',
      'status back to detected',
    );
  });

  it('a profile edited to a volume mode its class cannot give stops only the disks of that class, naming the profile and the mode; fixing it lets them go on', async () => {
    await eventually(() => sc.storageProfiles.get({ name: nfs }).catch(() => undefined), 'the nfs profile');
    await sc.storageProfiles.mergePatch({ name: nfs }, { spec: { claimPropertySets: [{ accessModes: ['ReadWriteMany'], volumeMode: 'Block' }] } });
    await eventually(async () => (await sc.storageProfiles.get({ name: nfs })).status?.claimPropertySets?.[0]?.volumeMode === 'Block', 'the edit in force');
    await c.disks.create(blankDisk('on-nfs', nfs));
    await c.disks.create(blankDisk('elsewhere', replicated));
    const stopped = await eventually(async () => {
      const d = await c.disks.get({ namespace: ns, name: 'on-nfs' });
      return d.status?.conditions?.find((x) => x.type === 'Ready' && x.reason === 'StorageClassIsNotReady') !== undefined ? d : undefined;
    }, 'the nfs disk stopped with a reason');
    expect(stopped.status?.phase).toBe('Pending');
    const ready = stopped.status?.conditions?.find((x) => x.type === 'Ready');
    expect(ready?.message).toContain(`StorageProfile ${nfs} sets volume mode Block`);
    expect(ready?.message).toContain('cannot give');
    expect(stopped.status?.target?.persistentVolumeClaimName).toBeUndefined();
    // Nothing else is affected: the disk of the other class is made.
    await readyDisk('elsewhere');
    await sc.storageProfiles.mergePatch({ name: nfs }, { spec: { claimPropertySets: null } });
    expect(await claimOf(await readyDisk('on-nfs'))).toEqual({ accessModes: ['ReadWriteMany'], volumeMode: 'Filesystem' });
  });
});
