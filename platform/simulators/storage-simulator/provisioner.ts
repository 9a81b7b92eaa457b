/**
 * A static provisioner (SIMULATED storage backend): every PersistentVolumeClaim of the given storage
 * classes gets a PersistentVolume of its size whose hostPath is a directory under the simulator's
 * root (`<root>/<namespace>/<claim>`), pre-bound to the claim, which kube-controller-manager's binder
 * then binds; as the class allows (`classes.ts`): a claim asking an access or volume mode the class
 * cannot give gets none and a `ProvisioningFailed` Warning Event naming it, and a claim of a
 * `WaitForFirstConsumer` class waits for the scheduler's selected node, its volume pinned there. The volume's reclaim policy is Retain (no plugin here could delete a hostPath): once the
 * claim is gone and the volume is Released, the simulator deletes the volume and its directory.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { AlreadyExistsError, NotFoundError } from '../../../shared/errors/index.js';
import { EventRecorder, Informer } from '../../../shared/kube/index.js';
import type { Logger } from '../../../shared/log/index.js';
import { decide } from './classes.js';
import { FIELD_MANAGER, PV_LABEL, type PV, type PVC, type StorageSimulatorClients } from './kube.js';

export interface ProvisionerOptions {
  clients: StorageSimulatorClients;
  log: Logger;
  /** Storage classes whose claims get a volume. */
  storageClasses: readonly string[];
  /** Where the volumes' directories are made. */
  root: string;
  namespace?: string | undefined;
  /** The value of PV_LABEL on the volumes made here (one simulator never deletes another's). */
  instance: string;
}

export class StaticProvisioner {
  private readonly abort = new AbortController();
  private readonly informers: Informer<PVC | PV>[] = [];
  private readonly done = new Set<string>();
  private readonly pending = new Set<Promise<void>>();
  /** Claims refused, with the reason last reported (one Event per claim and reason). */
  private readonly refused = new Map<string, string>();
  private readonly events: EventRecorder;

  constructor(private readonly o: ProvisionerOptions) {
    this.events = new EventRecorder({ events: o.clients.events, reportingController: FIELD_MANAGER, reportingInstance: o.instance, logger: o.log });
  }

  /** The directory backing a claim (made on first use). */
  dirOf(namespace: string, claim: string): string {
    const dir = join(this.o.root, namespace, claim);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  async start(): Promise<void> {
    const base = { signal: this.abort.signal, logger: this.o.log };
    const pvcs = new Informer<PVC>({ ...base, client: this.o.clients.pvcs, namespace: this.o.namespace });
    pvcs.on('add', (c) => this.track(this.provision(c)));
    pvcs.on('update', (c) => this.track(this.provision(c)));
    const pvs = new Informer<PV>({ ...base, client: this.o.clients.pvs, labelSelector: `${PV_LABEL}=${this.o.instance}` });
    pvs.on('add', (v) => this.track(this.reclaim(v)));
    pvs.on('update', (v) => this.track(this.reclaim(v)));
    this.informers.push(pvcs.start(), pvs.start());
    await Promise.all(this.informers.map((i) => i.synced));
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled([...this.pending]);
    await Promise.all(this.informers.map((i) => i.stop()));
  }

  private track(work: Promise<void>): void {
    const p = work.catch((err: unknown) => this.o.log.warn({ err }, 'provisioner step failed'));
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private async provision(pvc: PVC): Promise<void> {
    const ns = pvc.metadata.namespace ?? '';
    const name = pvc.metadata.name ?? '';
    const uid = pvc.metadata.uid ?? '';
    if (this.done.has(uid) || pvc.metadata.deletionTimestamp !== undefined || (pvc.spec.volumeName ?? '') !== '') return;
    if (!this.o.storageClasses.includes(pvc.spec.storageClassName ?? '')) return;
    const cls = await this.o.clients.storageClasses.get({ name: pvc.spec.storageClassName ?? '' }).catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
    if (cls === undefined) return;
    const decision = decide(pvc, cls);
    if (decision.act === 'refuse') {
      if (this.refused.get(uid) === decision.why) return;
      this.refused.set(uid, decision.why);
      this.o.log.info({ claim: `${ns}/${name}`, why: decision.why }, 'claim refused');
      await this.events.record(
        { ...pvc, apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
        { type: 'Warning', reason: 'ProvisioningFailed', action: 'Provision', note: decision.why },
      );
      return;
    }
    if (decision.act === 'wait' || this.done.has(uid)) return;
    this.done.add(uid);
    const size = pvc.spec.resources?.requests?.['storage'] ?? '1Gi';
    // Named as dynamic provisioners name theirs.
    const pvName = `pvc-${uid}`;
    try {
      await this.o.clients.pvs.create({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: pvName, labels: { [PV_LABEL]: this.o.instance } },
        spec: {
          capacity: { storage: size },
          accessModes: pvc.spec.accessModes ?? ['ReadWriteOnce'],
          volumeMode: pvc.spec.volumeMode ?? 'Filesystem',
          storageClassName: pvc.spec.storageClassName,
          persistentVolumeReclaimPolicy: 'Retain',
          hostPath: { path: this.dirOf(ns, name) },
          ...(decision.node === undefined ? {} : { nodeAffinity: pinnedTo(decision.node) }),
          claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: ns, name, uid },
        },
      });
      this.o.log.info({ claim: `${ns}/${name}`, volume: pvName, size }, 'volume provisioned');
    } catch (err: unknown) {
      if (!(err instanceof AlreadyExistsError)) {
        this.done.delete(uid);
        throw err;
      }
    }
  }

  private async reclaim(pv: PV): Promise<void> {
    if (pv.status?.phase !== 'Released' || pv.metadata.deletionTimestamp !== undefined) return;
    try {
      await this.o.clients.pvs.delete({ name: pv.metadata.name ?? '' });
    } catch (err: unknown) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    const path = pv.spec.hostPath?.path;
    // Only a directory of ours is removed.
    if (path !== undefined && resolve(path).startsWith(resolve(this.o.root) + sep)) rmSync(path, { recursive: true, force: true });
    this.o.log.info({ volume: pv.metadata.name, claim: pv.spec.claimRef?.name }, 'volume released: deleted with its directory');
  }
}

/** A volume reachable from one node only, as a local volume is. */
function pinnedTo(node: string): object {
  return { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } };
}
