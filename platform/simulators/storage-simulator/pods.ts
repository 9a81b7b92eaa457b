/**
 * The kubelet's part for the importer and uploader pods (SIMULATED: kwok's nodes run nothing): each
 * selected pod, once bound to a node (or at once where no scheduler runs), gets a loopback pod IP and
 * `Running`, and its container runs as the real importer program on this machine with the pod's own
 * environment: PVC mounts become the bound PersistentVolume's hostPath directory, the termination log
 * is a file of ours, the metrics and upload servers bind the pod IP (so the controller reads progress
 * from `<podIP>:<metrics port>` as in a cluster). When it exits the pod gets `Succeeded` or `Failed`
 * with the container's exit code and termination message, as a kubelet writes them. A pod deleted
 * while it runs has its process stopped (SIGTERM).
 */
import { existsSync, mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseQuantity } from '../../../shared/api/k8s/quantity.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import { Informer, type KubeObject, objectKey } from '../../../shared/kube/index.js';
import type { Logger, LogLevel } from '../../../shared/log/index.js';
import { startImporter, type ImporterProcess, type ImporterRun } from './importer-process.js';
import type { Pod, StorageSimulatorClients } from './kube.js';
import type { PodAddresses } from './addresses.js';

export interface PodRunnerOptions {
  clients: StorageSimulatorClients;
  log: Logger;
  /** Pods of this label selector are played (the controller's helper pods). */
  selector: string;
  namespace?: string | undefined;
  /** Run a pod only once the scheduler bound it (a platform with kube-scheduler); else at once. */
  requireNode: boolean;
  addresses: PodAddresses;
  /** The importer program (see importer-process.ts). */
  program?: string | undefined;
}

/** One finished run, kept for tests. */
export interface PodRun {
  readonly pod: string;
  readonly code: number | null;
  readonly result: Record<string, unknown> | undefined;
}

const RETRY_MS = 300;
/** The name of a Block volume's device stand-in in its directory (what readers of a volume look for). */
export const DEVICE_FILE = 'disk.img';

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export class PodRunner {
  readonly runs: PodRun[] = [];
  private readonly abort = new AbortController();
  private informer: Informer<Pod> | undefined;
  /** uid → the running program. */
  private readonly processes = new Map<string, { name: string; ip: string; proc: ImporterProcess }>();
  private readonly handled = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly o: PodRunnerOptions) {}

  async start(): Promise<void> {
    const inf = new Informer<Pod>({
      client: this.o.clients.pods,
      namespace: this.o.namespace,
      labelSelector: this.o.selector,
      signal: this.abort.signal,
      logger: this.o.log,
    });
    inf.on('add', (p) => this.consider(p));
    inf.on('update', (p) => this.consider(p));
    inf.on('delete', (p) => this.deleted(p));
    this.informer = inf.start();
    await inf.synced;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const t of this.timers) clearTimeout(t);
    for (const { proc } of this.processes.values()) proc.signal('SIGTERM');
    await Promise.allSettled([...this.running]);
    await this.informer?.stop();
  }

  /** `podIP:port` where an uploader pod's program accepts the upload, once it listens. */
  uploadAddress(podName: string): string | undefined {
    for (const { name, ip, proc } of this.processes.values()) {
      if (name !== podName) continue;
      const line = proc.logs.find((l) => l['msg'] === 'uploader listening');
      if (typeof line?.['port'] === 'number') return `${ip}:${line['port']}`;
    }
    return undefined;
  }

  private consider(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    if (this.abort.signal.aborted || uid === '' || this.handled.has(uid)) return;
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp !== undefined) return;
    if (this.o.requireNode && (pod.spec.nodeName ?? '') === '') return;
    this.handled.add(uid);
    const run = this.run(pod).catch((err: unknown) => {
      this.o.log.warn({ err, pod: key(pod) }, 'cannot run the pod; trying again');
      this.handled.delete(uid);
      this.later(pod);
    });
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  private later(pod: Pod): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const current = this.informer?.store.get({ namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' });
      if (current !== undefined) this.consider(current);
    }, RETRY_MS);
    this.timers.add(timer);
  }

  private deleted(pod: Pod): void {
    const entry = this.processes.get(pod.metadata.uid ?? '');
    if (entry !== undefined) {
      this.o.log.info({ pod: key(pod) }, 'pod deleted: stopping its program');
      entry.proc.signal('SIGTERM');
    }
  }

  /** Mount the pod's claims, start its program, report Running, and its end when it exits. */
  private async run(pod: Pod): Promise<void> {
    const container = pod.spec.containers[0];
    if (container === undefined) return;
    const mounts = await this.mounts(pod);
    if (mounts === undefined) {
      // A claim not bound yet: the kubelet waits for its volume.
      this.handled.delete(pod.metadata.uid ?? '');
      this.later(pod);
      return;
    }
    const ip = this.o.addresses.next();
    const local = (value: string): string => {
      for (const [path, dir] of mounts) if (value === path || value.startsWith(`${path}/`)) return dir + value.slice(path.length);
      return value;
    };
    const env: Record<string, string> = { LOG_LEVEL: 'info' };
    for (const e of container.env ?? []) if (e.value !== undefined) env[e.name] = local(e.value);
    // The pod's servers bind its own address, as in its network namespace.
    env['IMPORTER_METRICS_HOST'] = ip;
    env['UPLOADER_HOST'] = ip;
    const log = this.o.log.child({ pod: key(pod), podIP: ip });
    const proc = startImporter(env, {
      program: this.o.program,
      onLog: (line) => {
        if (forwardedLine(line)) log.info({ line }, 'importer');
      },
    });
    const uid = pod.metadata.uid ?? '';
    this.processes.set(uid, { name: pod.metadata.name ?? '', ip, proc });
    log.info({ pid: proc.pid, mounts: Object.fromEntries(mounts) }, 'pod running: the importer program started');
    const started = now();
    try {
      await this.writeStatus(pod, running(container.name, container.image ?? '', ip, started));
      const result = await proc.done;
      this.runs.push({ pod: pod.metadata.name ?? '', code: result.code, result: result.result });
      log.info({ exitCode: result.code, result: result.result }, 'pod ended');
      await this.writeStatus(pod, ended(container.name, container.image ?? '', ip, started, result));
    } finally {
      this.processes.delete(uid);
    }
  }

  /**
   * Container path → host path for every PVC volume of the container, undefined while one is unbound: a
   * mount is the volume's directory; a device (`volumeDevices`, a Block claim) is the file `disk.img` in
   * it, made at the volume's capacity (sparse) when missing: the stand-in for the block device.
   */
  private async mounts(pod: Pod): Promise<Map<string, string> | undefined> {
    const container = pod.spec.containers[0];
    const claims = new Map((pod.spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [[v.name, v.persistentVolumeClaim.claimName] as const] : [])));
    const wanted = [
      ...(container?.volumeMounts ?? []).map((m) => ({ name: m.name, at: m.mountPath, device: false })),
      ...(container?.volumeDevices ?? []).map((m) => ({ name: m.name, at: m.devicePath, device: true })),
    ];
    const out = new Map<string, string>();
    for (const m of wanted) {
      const claim = claims.get(m.name);
      if (claim === undefined) continue;
      const pvc = await this.o.clients.pvcs.get({ namespace: pod.metadata.namespace, name: claim }).catch(() => undefined);
      const volume = pvc?.status?.phase === 'Bound' ? pvc.spec.volumeName : undefined;
      if (volume === undefined) return undefined;
      const pv = await this.o.clients.pvs.get({ name: volume });
      const path = pv.spec.hostPath?.path;
      if (path === undefined) throw new Error(`PersistentVolume ${volume} has no hostPath: the simulator mounts only directories`);
      out.set(m.at, m.device ? deviceFile(path, pv.spec.capacity?.['storage']) : path);
    }
    return out;
  }

  private async writeStatus(pod: Pod, status: Record<string, unknown>): Promise<void> {
    try {
      await this.o.clients.pods.patchStatus({ namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' }, status);
    } catch (err: unknown) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
}

/** Levels of the importer's log lines that are always forwarded: shared/log writes the label, not pino's number. */
const SEVERE_LEVELS: ReadonlySet<unknown> = new Set<LogLevel>(['error', 'fatal']);

/** Whether a log line of a pod's program goes to the simulator's log: progress, the uploader's address, errors and fatal errors. */
export function forwardedLine(line: Readonly<Record<string, unknown>>): boolean {
  return line['msg'] === 'progress' || line['msg'] === 'uploader listening' || SEVERE_LEVELS.has(line['level']);
}

/** The file standing in for a Block volume's device: `<dir>/disk.img`, made at the volume's capacity. */
function deviceFile(dir: string, capacity: string | undefined): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, DEVICE_FILE);
  if (!existsSync(file)) {
    writeFileSync(file, '');
    truncateSync(file, parseQuantity(capacity) ?? 1 << 30);
  }
  return file;
}

function key(o: KubeObject): string {
  return objectKey(o.metadata);
}

function running(name: string, image: string, ip: string, startedAt: string): Record<string, unknown> {
  return {
    phase: 'Running',
    hostIP: '127.0.0.1',
    hostIPs: [{ ip: '127.0.0.1' }],
    podIP: ip,
    podIPs: [{ ip }],
    startTime: startedAt,
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: startedAt },
      { type: 'Initialized', status: 'True', lastTransitionTime: startedAt },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: startedAt },
      { type: 'Ready', status: 'True', lastTransitionTime: startedAt },
    ],
    containerStatuses: [{ name, image, imageID: '', ready: true, started: true, restartCount: 0, state: { running: { startedAt } } }],
  };
}

function ended(name: string, image: string, ip: string, startedAt: string, run: ImporterRun): Record<string, unknown> {
  const ok = run.code === 0;
  const finishedAt = now();
  return {
    phase: ok ? 'Succeeded' : 'Failed',
    podIP: ip,
    podIPs: [{ ip }],
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: startedAt },
      { type: 'Initialized', status: 'True', lastTransitionTime: startedAt },
      { type: 'ContainersReady', status: 'False', reason: 'PodCompleted', lastTransitionTime: finishedAt },
      { type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: finishedAt },
    ],
    containerStatuses: [
      {
        name,
        image,
        imageID: '',
        ready: false,
        started: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode: run.code ?? 137,
            reason: ok ? 'Completed' : 'Error',
            // The kubelet keeps at most 4096 bytes of a termination message.
            message: run.message.slice(-4096),
            startedAt,
            finishedAt,
          },
        },
      },
    ],
  };
}
