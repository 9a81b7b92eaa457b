/**
 * KubeVirt's part, played by the tests: virt-controller turns an internal VM's runStrategy and state
 * change requests into instances (create, delete), and the test then moves instances the way
 * virt-handler would (scheduled, running on a node with the pod IP, guest shut down or reset,
 * migrated). With autoRun, every new instance runs at once on a node with the address Cilium would
 * give it (the template's cni.cilium.io/ipAddress).
 */
import { INTERNAL_API_VERSION, type InternalVirtualMachine, type InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import { Informer, ownerReferenceTo, type KubeObject } from '../../../shared/kube/index.js';
import { COMPUTE_CONTAINER, CREATED_BY_LABEL } from '../../../daemons/controller/kube/launcher.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { CILIUM_IP_ANNOTATION } from '../../../daemons/controller/reconcilers/vm/kvvm/build.js';

export interface FakeKubeVirtOptions {
  /** New instances run at once on this node. */
  autoRunOn?: string;
}

export class FakeKubeVirt {
  private readonly abort = new AbortController();
  private readonly informers: { synced: Promise<void>; stop(): Promise<void> }[] = [];
  private readonly chains = new Map<string, Promise<void>>();
  /** Instances this fake created, by VM name (to assert nothing was created twice). */
  readonly created = new Map<string, number>();

  constructor(
    private readonly c: Clients,
    private readonly namespace: string,
    private readonly options: FakeKubeVirtOptions = {},
  ) {}

  async start(): Promise<void> {
    const kvvms = new Informer<InternalVirtualMachine>({ client: this.c.kvvms, namespace: this.namespace, signal: this.abort.signal });
    const vmis = new Informer<InternalVirtualMachineInstance>({ client: this.c.kvvmis, namespace: this.namespace, signal: this.abort.signal });
    const kick = (o: KubeObject): void => this.enqueue(o.metadata.name ?? '');
    this.informers.push(this.watch(kvvms, kick), this.watch(vmis, kick));
    await Promise.all(this.informers.map((i) => i.synced));
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.informers.map((i) => i.stop()));
    await Promise.allSettled([...this.chains.values()]);
  }

  private watch<T extends KubeObject>(inf: Informer<T>, kick: (o: T) => void): Informer<T> {
    inf.on('add', kick);
    inf.on('update', kick);
    inf.on('delete', kick);
    return inf.start();
  }

  private enqueue(name: string): void {
    const previous = this.chains.get(name) ?? Promise.resolve();
    const next = previous.then(() => this.sync(name)).catch(() => undefined);
    this.chains.set(name, next);
  }

  /** virt-controller's loop for one VM: requests first, then runStrategy Always, then the printable status. */
  private async sync(name: string): Promise<void> {
    if (this.abort.signal.aborted) return;
    const kvvm = await this.get(() => this.c.kvvms.get(this.ref(name)));
    let vmi = await this.get(() => this.c.kvvmis.get(this.ref(name)));
    if (kvvm === undefined) {
      if (vmi !== undefined) await this.deleteVMI(name);
      return;
    }
    const requests = kvvm.status?.stateChangeRequests ?? [];
    for (const req of requests) {
      if (req.action === 'Stop' && vmi !== undefined && (req.uid == null || req.uid === vmi.metadata.uid)) {
        await this.deleteVMI(name);
        vmi = undefined;
      }
      if (req.action === 'Start' && vmi === undefined) vmi = await this.createVMI(kvvm);
    }
    if (requests.length > 0) await this.c.kvvms.patchStatus(this.ref(name), { stateChangeRequests: null });
    else if (kvvm.spec.runStrategy === 'Always' && vmi === undefined) vmi = await this.createVMI(kvvm);
    const printable = vmi === undefined ? 'Stopped' : vmi.status?.phase === 'Running' ? 'Running' : 'Starting';
    if (kvvm.status?.printableStatus !== printable || kvvm.status.created !== (vmi !== undefined)) {
      await this.c.kvvms.patchStatus(this.ref(name), { printableStatus: printable, created: vmi !== undefined, ready: printable === 'Running' });
    }
  }

  private async createVMI(kvvm: InternalVirtualMachine): Promise<InternalVirtualMachineInstance> {
    const name = kvvm.metadata.name ?? '';
    const template = kvvm.spec.template;
    const vmi = await this.c.kvvmis.create({
      apiVersion: INTERNAL_API_VERSION,
      kind: 'InternalVirtualizationVirtualMachineInstance',
      metadata: {
        name,
        namespace: this.namespace,
        labels: template.metadata?.labels ?? {},
        annotations: template.metadata?.annotations ?? {},
        ownerReferences: [{ ...ownerReferenceTo(kvvm, { controller: true }) }],
      },
      spec: template.spec,
    });
    this.created.set(name, (this.created.get(name) ?? 0) + 1);
    if (this.options.autoRunOn === undefined) return vmi;
    return this.run(name, this.options.autoRunOn);
  }

  private async deleteVMI(name: string): Promise<void> {
    try {
      await this.c.kvvmis.delete(this.ref(name));
    } catch (err: unknown) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  /** virt-handler: the instance runs on `node` with the address Cilium assigned from the template. */
  async run(name: string, node: string): Promise<InternalVirtualMachineInstance> {
    const vmi = await this.c.kvvmis.get(this.ref(name));
    const ip = vmi.metadata.annotations?.[CILIUM_IP_ANNOTATION] ?? '10.244.0.10';
    const conditions = [{ type: 'Ready', status: 'True' }];
    return this.c.kvvmis.mergePatch(this.ref(name), {
      status: { phase: 'Running', nodeName: node, interfaces: [{ name: 'default', ipAddress: ip, ipAddresses: [ip] }], conditions },
    });
  }

  /** The instance is scheduled to a node, its pod not running yet. */
  async schedule(name: string, node: string): Promise<void> {
    await this.c.kvvmis.mergePatch(this.ref(name), { status: { phase: 'Scheduled', nodeName: node } });
  }

  /** The guest ended (shutdown or reset): the launcher's compute container says so, the instance Succeeded. */
  async guestEnded(name: string, reason: 'guest-shutdown' | 'guest-reset'): Promise<void> {
    const vmi = await this.c.kvvmis.get(this.ref(name));
    const podName = `virt-launcher-${name}-${(vmi.metadata.uid ?? '').slice(0, 5)}`;
    await this.c.pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: podName, namespace: this.namespace, labels: { [CREATED_BY_LABEL]: vmi.metadata.uid ?? '' } },
      spec: { containers: [{ name: COMPUTE_CONTAINER, image: 'virt-launcher' }] },
    });
    const terminated = { exitCode: 0, reason: 'Completed', message: `{"event":"SHUTDOWN","reason":"${reason}"}` };
    await this.c.pods.patchStatus({ namespace: this.namespace, name: podName }, {
      phase: 'Succeeded',
      containerStatuses: [{ name: COMPUTE_CONTAINER, image: 'virt-launcher', imageID: '', ready: false, restartCount: 0, state: { terminated } }],
    });
    await this.c.kvvmis.mergePatch(this.ref(name), { status: { phase: 'Succeeded' } });
  }

  /** The instance failed (crash without a guest event). */
  async fail(name: string): Promise<void> {
    await this.c.kvvmis.mergePatch(this.ref(name), { status: { phase: 'Failed' } });
  }

  /** A migration runs to its end: the instance is on the target node, the migration Succeeded. */
  async completeMigration(migrationName: string, vmName: string, targetNode: string): Promise<void> {
    const vmi = await this.c.kvvmis.get(this.ref(vmName));
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const migrationState = { startTimestamp: now, endTimestamp: now, completed: true, sourceNode: vmi.status?.nodeName, targetNode };
    await this.c.kvvmis.mergePatch(this.ref(vmName), { status: { nodeName: targetNode, migrationState } });
    await this.c.migrations.patchStatus(this.ref(migrationName), { phase: 'Succeeded' });
  }

  private ref(name: string): { namespace: string; name: string } {
    return { namespace: this.namespace, name };
  }

  private async get<T>(read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }
}
