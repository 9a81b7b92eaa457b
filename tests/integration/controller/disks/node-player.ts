/**
 * The parts of a node and a storage backend that the test control plane lacks, played for the
 * storage reconcilers' tests (test support, not shipped behaviour):
 * - kubelet: every importer/uploader Pod of the namespace is run as the real importer program
 *   (daemons/importer) on this machine with the Pod's own environment; its PVC mounts become
 *   directories; then the Pod's status is written as the kubelet would (phase, the container's
 *   termination message, exit code);
 * - a static provisioner: every PVC of the namespace gets a PersistentVolume of its size, pre-bound to
 *   it, which kube-controller-manager's binder then binds.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import { AlreadyExistsError, NotFoundError } from '../../../../shared/errors/index.js';
import type { KubeClient } from '../../../../shared/kube/index.js';
import { sleep } from '../../../../shared/kube/index.js';
import { DATA_DIR, SOURCE_DIR } from '../../../../daemons/controller/reconcilers/provisioning/importer.js';
import type { HelperPod, StorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';
import { startImporter, type ImporterProcess } from '../../importer/process.js';

const PVSchema = z.looseObject({ apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema, spec: z.looseObject({}) });

interface ContainerSpec {
  image: string;
  env?: { name: string; value: string }[];
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  containers: ContainerSpec[];
  volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[];
}

export interface Run {
  pod: string;
  code: number | null;
  result: Record<string, unknown> | undefined;
}

export class NodePlayer {
  /** Where each PVC's "volume" lives on this machine. */
  readonly root = mkdtempSync(join(tmpdir(), 'disks-node-'));
  readonly runs: Run[] = [];
  private readonly started = new Set<string>();
  private readonly pvs = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private readonly processes = new Map<string, ImporterProcess>();
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly kube: KubeClient,
    private readonly sc: StorageClients,
    private readonly namespace: string,
    private readonly storageClass: string,
  ) {}

  /** The local port an uploader Pod's program listens on, once it does (undefined before). */
  uploadPort(pod: string): number | undefined {
    const line = this.processes.get(pod)?.logs.find((l) => l['msg'] === 'uploader listening');
    return typeof line?.['port'] === 'number' ? line['port'] : undefined;
  }

  /** The directory backing a PVC (its volume's contents). */
  dirOf(claim: string): string {
    const dir = join(this.root, claim);
    mkdirSync(dir, { recursive: true });
    return dir;
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
    await Promise.all([...this.running]);
    rmSync(this.root, { recursive: true, force: true });
  }

  private async pass(): Promise<void> {
    const pods = await this.sc.helperPods.list({ namespace: this.namespace });
    for (const pod of pods.items) {
      const uid = pod.metadata.uid ?? '';
      if (this.started.has(uid) || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' || pod.metadata.deletionTimestamp !== undefined)
        continue;
      this.started.add(uid);
      const run = this.runPod(pod).catch(() => undefined);
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }
    const pvcs = await this.sc.pvcs.list({ namespace: this.namespace });
    for (const pvc of pvcs.items) {
      const name = pvc.metadata.name ?? '';
      if (this.pvs.has(name) || pvc.spec.storageClassName !== this.storageClass) continue;
      this.pvs.add(name);
      await this.createPV(name, pvc.metadata.uid ?? '', pvc.spec.resources?.requests?.['storage'] ?? '1Gi');
    }
  }

  private async createPV(claim: string, claimUid: string, size: string): Promise<void> {
    const pvs = this.kube.resource(
      { group: '', version: 'v1', plural: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false },
      PVSchema,
      'disks-test',
    );
    try {
      await pvs.create({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: `pv-${this.namespace}-${claim}`.slice(0, 253), labels: { 'disks-test': this.namespace } },
        spec: {
          capacity: { storage: size },
          accessModes: ['ReadWriteOnce'],
          volumeMode: 'Filesystem',
          storageClassName: this.storageClass,
          persistentVolumeReclaimPolicy: 'Delete',
          hostPath: { path: this.dirOf(claim) },
          claimRef: { namespace: this.namespace, name: claim, uid: claimUid },
        },
      });
    } catch (err: unknown) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
  }

  /** Run the importer as the Pod says, then report its end as the kubelet does. */
  private async runPod(pod: HelperPod): Promise<void> {
    const spec = pod.spec as unknown as PodSpec;
    const container = spec.containers[0];
    if (container === undefined) return;
    const claims = new Map((spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [[v.name, v.persistentVolumeClaim.claimName] as const] : [])));
    const mountDirs = new Map<string, string>();
    for (const m of container.volumeMounts ?? []) {
      const claim = claims.get(m.name);
      if (claim !== undefined) mountDirs.set(m.mountPath, this.dirOf(claim));
    }
    const local = (value: string): string => {
      for (const prefix of [DATA_DIR, SOURCE_DIR]) {
        const dir = mountDirs.get(prefix);
        if (dir !== undefined && value.startsWith(`${prefix}/`)) return dir + value.slice(prefix.length);
      }
      return value;
    };
    const env: Record<string, string> = { LOG_LEVEL: 'info', UPLOADER_PORT: '0', UPLOADER_HOST: '127.0.0.1' };
    for (const e of container.env ?? []) {
      // The termination log and the metrics port are this machine's, not the Pod's.
      if (e.name === 'IMPORTER_TERMINATION_LOG' || e.name === 'IMPORTER_METRICS_PORT' || e.name === 'UPLOADER_PORT' || e.name === 'UPLOADER_HOST') continue;
      env[e.name] = local(e.value);
    }
    const proc = startImporter(env);
    this.processes.set(pod.metadata.name ?? '', proc);
    const { code, result } = await proc.done;
    this.runs.push({ pod: pod.metadata.name ?? '', code, result });
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const status = {
      phase: code === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [
        {
          name: 'importer',
          image: container.image,
          imageID: '',
          ready: false,
          restartCount: 0,
          state: {
            terminated: {
              exitCode: code ?? 137,
              reason: code === 0 ? 'Completed' : 'Error',
              message: JSON.stringify(result ?? {}),
              startedAt: now,
              finishedAt: now,
            },
          },
        },
      ],
    };
    try {
      await this.sc.helperPods.patchStatus({ namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' }, status);
    } catch (err: unknown) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
}
