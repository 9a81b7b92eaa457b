/**
 * KubeVirt's part on the internal objects, simulated: virt-controller turns an internal VM's
 * runStrategy and state change requests into instances (create, delete) and reports the VM's
 * printable status; virt-handler "runs" the instances. Two ways to run them:
 *
 * - launcher pods (the local platform): each instance gets a virt-launcher pod that the real
 *   kube-scheduler places on a simulated node (kwok runs it), then Scheduling → Scheduled → Running
 *   with the address the guest agent reports; live migrations get a target pod on another node and
 *   go through KubeVirt's phases (instance.ts, migration.ts);
 * - no pods (controller tests): with `autoRunOn` every new instance runs at once on that node; the
 *   test moves instances itself (`run`, `schedule`, `guestEnded`, `fail`, `completeMigration`).
 *
 * Every VM is handled on its own chain (never two steps of one VM at once); any watch event on the
 * VM, its instance, its pods or its migrations brings the next step.
 */
import {
  INTERNAL_API_VERSION,
  type InternalVirtualMachine,
  type InternalVirtualMachineInstance,
  type InternalVirtualMachineInstanceMigration,
} from '../../../shared/api/internal/resources.js';
import { errorMessage } from '../../../shared/errors/index.js';
import { Informer, ownerReferenceTo, type KubeClient, type KubeObject } from '../../../shared/kube/index.js';
import { rootLogger, type Logger } from '../../../shared/log/index.js';
import { find, now, ref, remove, withConditions, type StepContext } from './context.js';
import { simulatorClients, type LauncherPod, type SimulatorClients } from './kube.js';
import { launcherSelector } from '../../../shared/api/internal/launcher.js';
import { CILIUM_IP_ANNOTATION, COMPUTE_CONTAINER, CREATED_BY_LABEL, DOMAIN_ANNOTATION } from './launcher.js';
import { advanceInstance, deleteStrayPods, finalizeInstance, INSTANCE_FINALIZER } from './virt-controller/instance.js';
import { advanceMigration, deleteOrphanTargets, isFinished } from './virt-controller/migration.js';
import { fileDiskReader, findsBootableDevice, type DiskReader } from './virt-handler/firmware.js';
import { guestConditions, guestOSInfoOf, launcherVersions, runGuest } from './virt-handler/guest.js';
import { handleHotplug } from './virt-handler/hotplug.js';
import { handleMigration, migratedVolumesDone } from './virt-handler/migration.js';
import { updateVolumes } from './virt-controller/volumes.js';
import { beat, type AgentNode, type NodeOffer } from './virt-handler/node.js';
import type { GuestBackend } from './qemu/backend.js';

/**
 * What the simulator plays: `all` (virt-controller and virt-handler, simulated) or `node-agent`
 * (virt-handler only, on the instances, pods and migrations a real virt-controller made).
 */
export type SimulatorRole = 'all' | 'node-agent';

export interface SimulatorOptions {
  /** Default `all`. `node-agent` needs launcher pods (real virt-controller makes them). */
  role?: SimulatorRole;
  /** Node agent (or `labelNodes`): the nodes it plays virt-handler on (a label selector); every node when unset. */
  nodeSelector?: string | undefined;
  /**
   * What its nodes offer (node labeller labels), the same for every node or per node. Default: a few
   * CPU models, q35 machines, a Skylake host's features.
   */
  nodeOffer?: NodeOffer | ((node: AgentNode) => NodeOffer);
  /** Role `all`: play virt-handler's node labeller (and heartbeat) too; the node agent always does. */
  labelNodes?: boolean;
  /** Node agent: how often the heartbeat is renewed. Default 30 s (virt-controller's timeout is 5 min). */
  heartbeatMs?: number;
  /** Only this namespace; every namespace when unset. */
  namespace?: string | undefined;
  /** Play virt-launcher pods (placed by the scheduler, run by the node simulator) and live migrations. */
  launcherPods?: boolean;
  /** Without launcher pods: every new instance runs at once on this node. */
  autoRunOn?: string | undefined;
  /** Launcher pods: how long the guest boots once its pod runs. Default 0. */
  bootDelayMs?: number;
  /** Launcher pods: how long a live migration copies memory once the target runs. Default 0. */
  migrationDelayMs?: number;
  /** Launcher pods: a migration whose target pod stays unschedulable this long fails. Default 30 s. */
  unschedulableTimeoutMs?: number;
  /** Where the guest firmware reads a volume's disk image (default: this machine's files). */
  diskReader?: DiskReader;
  /** Real guests: every running instance a QEMU process (the caller starts and stops the backend). */
  guests?: GuestBackend | undefined;
  logger?: Logger;
}

type VM = InternalVirtualMachine;
type VMI = InternalVirtualMachineInstance;
type VMIM = InternalVirtualMachineInstanceMigration;

const RETRY_MS = { first: 200, max: 10_000 };
/** What a simulated node offers KubeVirt unless told otherwise: the classes' usual CPU models, q35 machines, a Skylake host. */
export const DEFAULT_OFFER: NodeOffer = {
  cpuModels: ['Nehalem', 'Westmere', 'SandyBridge', 'IvyBridge', 'Haswell', 'Broadwell', 'Skylake-Client', 'Cascadelake-Server', 'EPYC'],
  machineTypes: ['q35', 'pc-q35-rhel9.4.0'],
  hostModel: 'Skylake-Client-IBRS',
  vendor: 'Intel',
  // As KubeVirt's node labeller names them (libvirt's feature names, less its deny list).
  cpuFeatures: [
    'abm',
    'adx',
    'aes',
    'avx',
    'avx2',
    'bmi1',
    'bmi2',
    'clflushopt',
    'erms',
    'f16c',
    'fma',
    'fsgsbase',
    'invpcid',
    'invtsc',
    'movbe',
    'pcid',
    'pclmuldq',
    'pdpe1gb',
    'popcnt',
    'rdrand',
    'rdseed',
    'rdtscp',
    'smap',
    'smep',
    'sse4.1',
    'sse4.2',
    'ssse3',
    'tsc-deadline',
    'vme',
    'x2apic',
    'xsave',
    'xsavec',
    'xsaveopt',
    'xsaves',
  ],
};

export class KubeVirtSimulator {
  private readonly c: SimulatorClients;
  private readonly log: Logger;
  private readonly abort = new AbortController();
  private readonly informers: Informer<KubeObject>[] = [];
  private migrations: Informer<VMIM> | undefined;
  private nodes: Informer<AgentNode> | undefined;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly startedAt = new Map<string, number>();
  private readonly step: StepContext;
  /** Instances created, by VM name (tests assert nothing was created twice). */
  readonly created = new Map<string, number>();

  constructor(
    kube: KubeClient,
    private readonly options: SimulatorOptions = {},
  ) {
    this.c = simulatorClients(kube);
    this.log = options.logger ?? rootLogger.child({ component: 'kubevirt-simulator' });
    this.step = {
      c: this.c,
      log: this.log,
      bootDelayMs: options.bootDelayMs ?? 0,
      migrationDelayMs: options.migrationDelayMs ?? 0,
      unschedulableTimeoutMs: options.unschedulableTimeoutMs ?? 30_000,
      volumes: { pvcs: this.c.pvcs, pvs: this.c.pvs, reader: options.diskReader ?? fileDiskReader },
      guests: options.guests,
      elapsed: (key, delayMs, vmKey) => this.elapsed(key, delayMs, vmKey),
      forget: (key) => this.startedAt.delete(key),
    };
  }

  /** Start watching; resolves once every informer has listed. */
  async start(): Promise<void> {
    const base = { namespace: this.options.namespace, signal: this.abort.signal, logger: this.log };
    const vmKey = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
    const nodeAgent = this.nodeAgent();
    if (!nodeAgent) this.watch(new Informer<VM>({ ...base, client: this.c.kvvms }), vmKey);
    this.watch(new Informer<VMI>({ ...base, client: this.c.kvvmis }), vmKey);
    if (this.options.launcherPods === true || nodeAgent) {
      const pods = new Informer<LauncherPod>({ ...base, client: this.c.pods, labelSelector: launcherSelector() });
      this.watch(pods, (p) => `${p.metadata.namespace ?? ''}/${p.metadata.annotations?.[DOMAIN_ANNOTATION] ?? ''}`);
    }
    if (nodeAgent || this.options.labelNodes === true) {
      const nodes = new Informer<AgentNode>({ signal: this.abort.signal, logger: this.log, client: this.c.nodes, labelSelector: this.options.nodeSelector });
      nodes.on('add', (n) => this.enqueueNode(n.metadata.name ?? ''));
      this.informers.push(nodes.start() as unknown as Informer<KubeObject>);
      this.nodes = nodes;
    }
    if (this.options.launcherPods === true && !nodeAgent) {
      this.migrations = new Informer<VMIM>({ ...base, client: this.c.migrations });
      this.watch(this.migrations, (m) => `${m.metadata.namespace ?? ''}/${m.spec.vmiName}`);
    }
    await Promise.all(this.informers.map((i) => i.synced));
    if (nodeAgent || this.options.labelNodes === true) this.heartbeat();
    const role = this.options.role ?? 'all';
    this.log.info(
      { namespace: this.options.namespace ?? '(all)', role, launcherPods: this.options.launcherPods === true || nodeAgent },
      'kubevirt simulator started',
    );
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all(this.informers.map((i) => i.stop()));
    await Promise.allSettled([...this.chains.values()]);
  }

  /** virt-handler on every node it plays: node labeller labels, devices and a fresh heartbeat, again and again. */
  private heartbeat(): void {
    for (const n of this.nodes?.store.list() ?? []) this.enqueueNode(n.metadata.name ?? '');
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.abort.signal.aborted) this.heartbeat();
    }, this.options.heartbeatMs ?? 30_000);
    this.timers.add(timer);
  }

  private enqueueNode(name: string): void {
    const node = this.nodes?.store.list().find((n) => n.metadata.name === name);
    if (node === undefined || this.abort.signal.aborted) return;
    const given = this.options.nodeOffer ?? DEFAULT_OFFER;
    const offer = typeof given === 'function' ? given(node) : given;
    void beat(this.c.nodes, node, offer).catch((err: unknown) =>
      this.log.warn({ node: name, err: errorMessage(err) }, 'node heartbeat failed; next beat tries again'),
    );
  }

  private nodeAgent(): boolean {
    return this.options.role === 'node-agent';
  }

  private watch<T extends KubeObject>(inf: Informer<T>, keyOf: (o: T) => string): void {
    const kick = (o: T): void => this.enqueue(keyOf(o));
    inf.on('add', kick);
    inf.on('update', kick);
    inf.on('delete', kick);
    this.informers.push(inf.start() as unknown as Informer<KubeObject>);
  }

  private enqueue(key: string): void {
    if (this.abort.signal.aborted || key.endsWith('/')) return;
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.syncOrRetry(key));
    this.chains.set(key, next);
    void next.finally(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }

  private later(key: string, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.enqueue(key);
    }, ms);
    this.timers.add(timer);
  }

  private elapsed(key: string, delayMs: number, vmKey: string): boolean {
    if (delayMs <= 0) return true;
    const first = this.startedAt.get(key);
    if (first === undefined) {
      this.startedAt.set(key, Date.now());
      this.later(vmKey, delayMs);
      return false;
    }
    return Date.now() - first >= delayMs;
  }

  private async syncOrRetry(key: string): Promise<void> {
    try {
      await this.sync(key);
      this.failures.delete(key);
    } catch (err: unknown) {
      if (this.abort.signal.aborted) return;
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const delay = Math.min(RETRY_MS.first * 2 ** (n - 1), RETRY_MS.max);
      this.log.debug({ vm: key, err: errorMessage(err), retryInMs: delay }, 'step failed; trying again');
      this.later(key, delay);
    }
  }

  /** virt-handler's part: the guest on its node, its migrations and hot-plugged volumes (every role runs it, with launcher pods). */
  private async handle(key: string, vmi: VMI | undefined, launchers: readonly LauncherPod[]): Promise<void> {
    const [namespace = '', name = ''] = key.split('/');
    await this.options.guests?.endOthers(namespace, name, vmi?.metadata.uid);
    if (vmi === undefined) return;
    await runGuest(this.step, vmi, launchers);
    if (vmi.metadata.deletionTimestamp !== undefined) return;
    await handleMigration(this.step, vmi, launchers);
    // A real guest's hot-plug is the guest's own step (virt-handler/guest-hotplug.ts, run by runGuest).
    if (this.options.guests?.byVm(namespace, name)?.running === true) return;
    await handleHotplug(this.step, vmi);
  }

  /** The node agent's loop for one instance: only virt-handler's part, on what real virt-controller made. */
  private async syncNode(namespace: string, name: string): Promise<void> {
    const vmi = await find(() => this.c.kvvmis.get(ref(namespace, name)));
    await this.handle(`${namespace}/${name}`, vmi, vmi === undefined ? [] : await this.podsOf(namespace, name));
  }

  /**
   * virt-controller's loop for one VM (then virt-handler's part): an instance being deleted is finalized first (launcher pods
   * removed, then the finalizer), then the state change requests (a Start waits until the stopped
   * instance is gone), then runStrategy Always, then the instance and its migrations.
   */
  private async sync(key: string): Promise<void> {
    if (this.abort.signal.aborted) return;
    const [namespace = '', name = ''] = key.split('/');
    if (this.nodeAgent()) return this.syncNode(namespace, name);
    const pods = this.options.launcherPods === true;
    const kvvm = await find(() => this.c.kvvms.get(ref(namespace, name)));
    let vmi = await find(() => this.c.kvvmis.get(ref(namespace, name)));
    const launchers = pods ? await this.podsOf(namespace, name) : [];
    if (vmi?.metadata.deletionTimestamp !== undefined) {
      await this.shutDownGuest(vmi);
      if (pods) await finalizeInstance(this.step, vmi, launchers);
      if (kvvm !== undefined) await this.reportPrintable(kvvm, vmi, false);
      return;
    }
    if (kvvm === undefined) {
      if (vmi !== undefined) await this.deleteVMI(vmi);
      else if (pods) await deleteStrayPods(this.step, undefined, launchers);
      return;
    }
    const requests = kvvm.status?.stateChangeRequests ?? [];
    for (const req of requests) {
      if (req.action === 'Stop' && vmi !== undefined && (req.uid == null || req.uid === vmi.metadata.uid)) {
        if (await this.deleteVMI(vmi)) return; // still finalizing: its delete event brings the Start
        vmi = undefined;
      }
      if (req.action === 'Start' && vmi === undefined) vmi = await this.createVMI(kvvm);
    }
    if (requests.length > 0) await this.c.kvvms.patchStatus(ref(namespace, name), { stateChangeRequests: null });
    else if (kvvm.spec.runStrategy === 'Always' && vmi === undefined) vmi = await this.createVMI(kvvm);
    if (vmi !== undefined) await updateVolumes(this.step, kvvm, vmi);

    let unschedulable = false;
    if (pods) {
      await deleteStrayPods(this.step, vmi, launchers);
      if (vmi !== undefined) unschedulable = (await advanceInstance(this.step, vmi, launchers)).unschedulable;
      // Each step reads the instance afresh: the one before may have changed it.
      await this.handle(key, vmi === undefined ? undefined : await find(() => this.c.kvvmis.get(ref(namespace, name))), launchers);
      const live = (this.migrations?.store.list() ?? []).filter((m) => m.metadata.namespace === namespace && m.spec.vmiName === name && !isFinished(m));
      await deleteOrphanTargets(this.step, vmi, live, launchers);
      const open = live.find((m) => m.metadata.deletionTimestamp === undefined);
      if (open !== undefined) {
        const fresh = await find(() => this.c.migrations.get(ref(namespace, open.metadata.name ?? '')));
        const current = await find(() => this.c.kvvmis.get(ref(namespace, name)));
        if (fresh !== undefined && !isFinished(fresh)) await advanceMigration(this.step, fresh, current, launchers);
      }
      if (vmi !== undefined) vmi = await find(() => this.c.kvvmis.get(ref(namespace, name)));
    }
    await this.reportPrintable(kvvm, vmi, unschedulable);
  }

  private async reportPrintable(kvvm: VM, vmi: VMI | undefined, unschedulable: boolean): Promise<void> {
    const phase = vmi?.status?.phase;
    const migrating = vmi?.status?.migrationState?.startTimestamp != null && vmi.status.migrationState.completed !== true;
    const printable =
      vmi === undefined
        ? 'Stopped'
        : vmi.metadata.deletionTimestamp !== undefined
          ? 'Stopping'
          : phase === 'Running'
            ? migrating
              ? 'Migrating'
              : 'Running'
            : unschedulable
              ? 'ErrorUnschedulable'
              : 'Starting';
    if (kvvm.status?.printableStatus === printable && kvvm.status.created === (vmi !== undefined)) return;
    const r = ref(kvvm.metadata.namespace ?? '', kvvm.metadata.name ?? '');
    await this.c.kvvms.patchStatus(r, { printableStatus: printable, created: vmi !== undefined, ready: printable === 'Running' });
  }

  private podsOf(namespace: string, name: string): Promise<LauncherPod[]> {
    return this.c.pods.list({ namespace, labelSelector: launcherSelector(name) }).then((l) => l.items);
  }

  private async createVMI(kvvm: VM): Promise<VMI> {
    const name = kvvm.metadata.name ?? '';
    const template = kvvm.spec.template;
    const vmi = await this.c.kvvmis.create({
      apiVersion: INTERNAL_API_VERSION,
      kind: 'InternalVirtualizationVirtualMachineInstance',
      metadata: {
        name,
        namespace: kvvm.metadata.namespace,
        labels: template.metadata?.labels ?? {},
        annotations: template.metadata?.annotations ?? {},
        ownerReferences: [{ ...ownerReferenceTo(kvvm, { controller: true }) }],
        // With launcher pods, the instance stays until its pods are gone (as KubeVirt's does), so that
        // nobody else (the garbage collector) ever deletes a launcher pod.
        ...(this.options.launcherPods === true ? { finalizers: [INSTANCE_FINALIZER] } : {}),
      },
      spec: template.spec,
    });
    this.created.set(name, (this.created.get(name) ?? 0) + 1);
    this.log.info({ vm: `${kvvm.metadata.namespace ?? ''}/${name}`, uid: vmi.metadata.uid }, 'instance created');
    if (this.options.launcherPods !== true && this.options.autoRunOn !== undefined) {
      return this.run(name, this.options.autoRunOn, kvvm.metadata.namespace);
    }
    return vmi;
  }

  /** A real guest of a deleted instance powers down (ACPI, the grace period, then a kill) before its launcher pods go. */
  private async shutDownGuest(vmi: VMI): Promise<void> {
    const how = await this.options.guests?.end(vmi.metadata.uid ?? '');
    if (how !== undefined) this.log.info({ vm: `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`, how }, 'the guest QEMU process is gone');
  }

  /** Delete the instance; true while it is still there (being finalized: its launcher pods go first). */
  private async deleteVMI(vmi: VMI): Promise<boolean> {
    const namespace = vmi.metadata.namespace ?? '';
    const name = vmi.metadata.name ?? '';
    await remove(() => this.c.kvvmis.delete(ref(namespace, name)));
    this.log.info({ vm: `${namespace}/${name}`, uid: vmi.metadata.uid }, 'instance deleted');
    await this.shutDownGuest(vmi);
    if (this.options.launcherPods !== true) return false;
    const still = await find(() => this.c.kvvmis.get(ref(namespace, name)));
    if (still === undefined) return false;
    await finalizeInstance(this.step, still, await this.podsOf(namespace, name));
    return (await find(() => this.c.kvvmis.get(ref(namespace, name)))) !== undefined;
  }

  // ---- moves a test makes by hand (no launcher pods) ----

  private ns(namespace?: string): string {
    const ns = namespace ?? this.options.namespace;
    if (ns === undefined) throw new Error('kubevirt simulator: a namespace is needed (none was configured)');
    return ns;
  }

  /** virt-handler: the instance runs on `node` with the address Cilium assigned from the template. */
  async run(name: string, node: string, namespace?: string): Promise<VMI> {
    const r = ref(this.ns(namespace), name);
    const vmi = await this.c.kvvmis.get(r);
    const ip = vmi.metadata.annotations?.[CILIUM_IP_ANNOTATION] ?? '10.244.0.10';
    const bootable = await findsBootableDevice(vmi, this.step.volumes);
    const conditions = withConditions(vmi.status?.conditions, [{ type: 'Ready', status: 'True' }, ...guestConditions(bootable)]);
    return this.c.kvvmis.mergePatch(r, {
      metadata: { annotations: launcherVersions() },
      status: { phase: 'Running', nodeName: node, interfaces: [{ name: 'default', ipAddress: ip, ipAddresses: [ip] }], conditions, ...guestOSInfoOf(bootable) },
    });
  }

  /** The instance is scheduled to a node, its pod not running yet. */
  async schedule(name: string, node: string): Promise<void> {
    await this.c.kvvmis.mergePatch(ref(this.ns(), name), { status: { phase: 'Scheduled', nodeName: node } });
  }

  /** The guest ended (shutdown or reset): the launcher's compute container says so, the instance Succeeded. */
  async guestEnded(name: string, reason: 'guest-shutdown' | 'guest-reset'): Promise<void> {
    const namespace = this.ns();
    const vmi = await this.c.kvvmis.get(ref(namespace, name));
    const podName = `virt-launcher-${name}-${(vmi.metadata.uid ?? '').slice(0, 5)}`;
    await this.c.pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: podName, namespace, labels: { [CREATED_BY_LABEL]: vmi.metadata.uid ?? '' } },
      spec: { containers: [{ name: COMPUTE_CONTAINER, image: 'virt-launcher' }] },
    });
    const terminated = { exitCode: 0, reason: 'Completed', message: `{"event":"SHUTDOWN","reason":"${reason}"}` };
    await this.c.pods.patchStatus(ref(namespace, podName), {
      phase: 'Succeeded',
      containerStatuses: [{ name: COMPUTE_CONTAINER, image: 'virt-launcher', imageID: '', ready: false, restartCount: 0, state: { terminated } }],
    });
    await this.c.kvvmis.mergePatch(ref(namespace, name), { status: { phase: 'Succeeded' } });
  }

  /** The instance failed (crash without a guest event). */
  async fail(name: string): Promise<void> {
    await this.c.kvvmis.mergePatch(ref(this.ns(), name), { status: { phase: 'Failed' } });
  }

  /** A migration runs to its end: the instance is on the target node, the migration Succeeded. */
  async completeMigration(migrationName: string, vmName: string, targetNode: string): Promise<void> {
    const namespace = this.ns();
    const vmi = await this.c.kvvmis.get(ref(namespace, vmName));
    const at = now();
    const migrationState = { startTimestamp: at, endTimestamp: at, completed: true, sourceNode: vmi.status?.nodeName, targetNode };
    await this.c.kvvmis.mergePatch(ref(namespace, vmName), {
      status: { nodeName: targetNode, migrationState, evacuationNodeName: null, ...migratedVolumesDone(vmi) },
    });
    await this.c.migrations.patchStatus(ref(namespace, migrationName), { phase: 'Succeeded' });
  }
}
