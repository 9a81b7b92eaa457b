/**
 * SIMULATED CSI snapshot controller (test support, not shipped behaviour): the part of the
 * external-snapshotter and a CSI driver that the test control plane lacks. For every VolumeSnapshot
 * of one namespace it does what the real one decides, without any storage behind it:
 * - the class: the one named, else the default VolumeSnapshotClass of the PVC's StorageClass
 *   provisioner (annotation snapshot.storage.kubernetes.io/is-default-class); none → status.error;
 * - a PVC that does not exist → status.error; one not Bound yet → waits;
 * - otherwise a VolumeSnapshotContent bound to it and the VolumeSnapshot's status: readyToUse,
 *   restoreSize = the PVC's capacity, boundVolumeSnapshotContentName, creationTime.
 */
import {
  DEFAULT_SNAPSHOT_CLASS_ANNOTATION,
  SNAPSHOT_API,
  VolumeSnapshotClassSchema,
  VolumeSnapshotContentSchema,
  VolumeSnapshotSchema,
  volumeSnapshotClassDescriptor,
  volumeSnapshotContentDescriptor,
  volumeSnapshotDescriptor,
  type VolumeSnapshot,
} from '../../../../shared/api/k8s/volume-snapshot.js';
import { AlreadyExistsError } from '../../../../shared/errors/index.js';
import { sleep, type KubeClient, type ResourceClient } from '../../../../shared/kube/index.js';
import type { StorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';

const MANAGER = 'simulated-snapshot-controller';

export class SimulatedSnapshotController {
  private readonly snapshots: ResourceClient<VolumeSnapshot>;
  private readonly contents;
  private readonly classes;
  private stopped = false;
  private loop: Promise<void> | undefined;
  /** Names of the VolumeSnapshotContents made, for cleanup. */
  readonly made: string[] = [];
  /** VolumeSnapshots whose name starts with one of these are not taken until released (a slow storage). */
  private readonly held = new Set<string>();

  constructor(
    kube: KubeClient,
    private readonly sc: StorageClients,
    private readonly namespace: string,
    /** Called as each snapshot is taken (tests look at the world at that instant). */
    private readonly onTake?: (vs: VolumeSnapshot) => void,
  ) {
    this.snapshots = kube.resource(volumeSnapshotDescriptor, VolumeSnapshotSchema, MANAGER);
    this.contents = kube.resource(volumeSnapshotContentDescriptor, VolumeSnapshotContentSchema, MANAGER);
    this.classes = kube.resource(volumeSnapshotClassDescriptor, VolumeSnapshotClassSchema, MANAGER);
  }

  hold(namePrefix: string): void {
    this.held.add(namePrefix);
  }

  release(namePrefix: string): void {
    this.held.delete(namePrefix);
  }

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.pass().catch(() => undefined);
        await sleep(150);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    for (const name of this.made) await this.contents.delete({ name }).catch(() => undefined);
  }

  private async pass(): Promise<void> {
    for (const vs of (await this.snapshots.list({ namespace: this.namespace })).items) {
      if (vs.status?.readyToUse === true || vs.status?.error !== undefined || vs.metadata.deletionTimestamp !== undefined) continue;
      if ([...this.held].some((p) => vs.metadata.name?.startsWith(p) === true)) continue;
      await this.take(vs);
    }
  }

  private async take(vs: VolumeSnapshot): Promise<void> {
    const claim = vs.spec.source.persistentVolumeClaimName ?? '';
    const pvc = await this.sc.pvcs.get({ namespace: this.namespace, name: claim }).catch(() => undefined);
    if (pvc === undefined)
      return this.fail(vs, `failed to get input parameters to create snapshot ${vs.metadata.name ?? ''}: PersistentVolumeClaim "${claim}" not found`);
    if (pvc.status?.phase !== 'Bound') return;
    const sc = await this.sc.storageClasses.get({ name: pvc.spec.storageClassName ?? '' }).catch(() => undefined);
    const driver = sc?.provisioner ?? '';
    const classes = (await this.classes.list()).items;
    const cls =
      vs.spec.volumeSnapshotClassName !== undefined
        ? classes.find((c) => c.metadata.name === vs.spec.volumeSnapshotClassName)
        : classes.find((c) => c.driver === driver && c.metadata.annotations?.[DEFAULT_SNAPSHOT_CLASS_ANNOTATION] === 'true');
    if (cls === undefined) return this.fail(vs, `cannot find default snapshot class for driver ${driver}`);
    const name = `snapcontent-${vs.metadata.uid ?? ''}`;
    this.onTake?.(vs);
    try {
      await this.contents.create({
        apiVersion: SNAPSHOT_API,
        kind: 'VolumeSnapshotContent',
        metadata: { name },
        spec: {
          deletionPolicy: cls.deletionPolicy,
          driver,
          source: { volumeHandle: pvc.spec.volumeName ?? claim },
          volumeSnapshotClassName: cls.metadata.name ?? '',
          volumeSnapshotRef: { name: vs.metadata.name ?? '', namespace: this.namespace, uid: vs.metadata.uid ?? '' },
        },
      });
      this.made.push(name);
    } catch (err: unknown) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
    const status = {
      boundVolumeSnapshotContentName: name,
      creationTime: new Date().toISOString(),
      readyToUse: true,
      restoreSize: pvc.status.capacity?.['storage'] ?? pvc.spec.resources?.requests?.['storage'] ?? '0',
    };
    await this.snapshots.mergePatch({ namespace: this.namespace, name: vs.metadata.name ?? '' }, { status }, { subresource: 'status' });
  }

  private async fail(vs: VolumeSnapshot, message: string): Promise<void> {
    const status = { readyToUse: false, error: { message, time: new Date().toISOString() } };
    await this.snapshots.mergePatch({ namespace: this.namespace, name: vs.metadata.name ?? '' }, { status }, { subresource: 'status' });
  }
}
