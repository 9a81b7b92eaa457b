/**
 * Console and VNC sessions (facts 3.2 notes): who holds a VM's console or VNC screen now, kept in a
 * coordination.k8s.io Lease per VM and kind (`d8v-vm-console-<vm>-<uid>`, `d8v-vm-vnc-<vm>-<uid>`),
 * owned by the VM, 30 s long, renewed every 10 s while the stream lives and deleted when it ends. A
 * session that takes over an active one records a Warning Event on the VM. Tracking is advisory:
 * it never blocks or delays connecting, and a failing write is logged and forgotten.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '../../shared/errors/index.js';
import type { Logger } from '../../shared/log/index.js';
import {
  formatMicroTime,
  nowMicros,
  ownerReferenceTo,
  parseMicroTime,
  type EventRecorder,
  type KubeObject,
  type Lease,
  type ResourceClient,
} from '../../shared/kube/index.js';
import { GROUP_VERSION } from './api.js';

export type SessionKind = 'console' | 'vnc';
export const SESSION_LABEL = 'virtualization.deckhouse.io/session';
export const SESSION_ID_ANNOTATION = 'virtualization.deckhouse.io/session-id';
export const SESSION_CLIENT_ANNOTATION = 'virtualization.deckhouse.io/session-client';
const PREEMPTED: Record<SessionKind, string> = { console: 'ConsoleSessionPreempted', vnc: 'VNCSessionPreempted' };
const CLIENT_MAX = 128;

/** What `probe=true` answers: the session holding the VM's console or VNC now (holder '' when none). */
export interface VirtualMachineSession {
  readonly apiVersion: string;
  readonly kind: 'VirtualMachineSession';
  readonly holder: string;
  readonly startTime: string | null;
  readonly client: string;
}

export interface SessionOptions {
  readonly leases: Pick<ResourceClient<Lease>, 'get' | 'create' | 'replace' | 'delete'>;
  readonly events: EventRecorder;
  readonly log: Logger;
  readonly durationSeconds: number;
  readonly renewMs: number;
  readonly now?: () => number;
}

export const leaseName = (kind: SessionKind, vm: KubeObject): string => `d8v-vm-${kind}-${vm.metadata.name ?? ''}-${vm.metadata.uid ?? ''}`;

/** One live session; `end()` when its stream ends. */
export interface Session {
  end(): Promise<void>;
}

export class Sessions {
  private readonly now: () => number;

  constructor(private readonly options: SessionOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The lease, or undefined when there is none; other failures throw. */
  private async read(namespace: string, name: string): Promise<Lease | undefined> {
    try {
      return await this.options.leases.get({ namespace, name });
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  /** Whether the lease names a holder whose last renewal is within its duration. */
  private active(lease: Lease | undefined): boolean {
    const spec = lease?.spec;
    if (spec?.holderIdentity === undefined || spec.holderIdentity === '' || spec.renewTime === undefined) return false;
    return parseMicroTime(spec.renewTime) / 1000 + (spec.leaseDurationSeconds ?? 0) * 1000 > this.now();
  }

  /** The session holding the VM's console or VNC now. Throws when the Lease cannot be read. */
  async probe(kind: SessionKind, vm: KubeObject): Promise<VirtualMachineSession> {
    const lease = await this.read(vm.metadata.namespace ?? '', leaseName(kind, vm));
    const held = this.active(lease);
    return {
      apiVersion: GROUP_VERSION,
      kind: 'VirtualMachineSession',
      holder: held ? (lease?.spec?.holderIdentity ?? '') : '',
      startTime: held ? (lease?.spec?.acquireTime ?? null) : null,
      client: held ? (lease?.metadata.annotations?.[SESSION_CLIENT_ANNOTATION] ?? '') : '',
    };
  }

  /**
   * Record a session of `holder` (user agent `client`) that just opened. Returns at once: the Lease
   * is written, renewed and deleted in the background, each failure logged.
   */
  start(kind: SessionKind, vm: KubeObject, holder: string, client: string): Session {
    const id = randomUUID();
    const namespace = vm.metadata.namespace ?? '';
    const name = leaseName(kind, vm);
    const log = this.options.log.child({ lease: `${namespace}/${name}`, session: id });
    let work = this.take(kind, vm, { namespace, name, id, holder, client: client.slice(0, CLIENT_MAX) }).catch((err: unknown) =>
      log.warn({ err }, 'session lease not written; the stream goes on'),
    );
    const chain = (step: () => Promise<void>, what: string): Promise<void> =>
      (work = work.then(step).catch((err: unknown) => log.warn({ err }, `session lease not ${what}; the stream goes on`)));
    const timer = setInterval(() => void chain(() => this.renew(namespace, name, id), 'renewed'), this.options.renewMs);
    timer.unref();
    return {
      end: () => {
        clearInterval(timer);
        return chain(() => this.release(namespace, name, id), 'deleted');
      },
    };
  }

  private async take(kind: SessionKind, vm: KubeObject, s: { namespace: string; name: string; id: string; holder: string; client: string }): Promise<void> {
    const time = formatMicroTime(nowMicros(this.now));
    const metadata = {
      name: s.name,
      namespace: s.namespace,
      labels: { [SESSION_LABEL]: kind },
      annotations: { [SESSION_ID_ANNOTATION]: s.id, [SESSION_CLIENT_ANNOTATION]: s.client },
      ownerReferences: [{ ...ownerReferenceTo(vm) }],
    };
    const spec = { holderIdentity: s.holder, leaseDurationSeconds: this.options.durationSeconds, acquireTime: time, renewTime: time };
    for (let attempt = 0; ; attempt++) {
      const current = await this.read(s.namespace, s.name);
      try {
        if (current === undefined) {
          await this.options.leases.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec });
        } else {
          const { resourceVersion, uid } = current.metadata;
          await this.options.leases.replace({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...metadata, resourceVersion, uid }, spec });
        }
      } catch (err: unknown) {
        if (err instanceof ConflictError && attempt < 2) continue;
        throw err;
      }
      if (this.active(current)) await this.preempted(kind, vm, current!, s.holder);
      return;
    }
  }

  private async preempted(kind: SessionKind, vm: KubeObject, previous: Lease, holder: string): Promise<void> {
    const was = previous.spec?.holderIdentity ?? '';
    const client = previous.metadata.annotations?.[SESSION_CLIENT_ANNOTATION];
    await this.options.events.record(vm, {
      type: 'Warning',
      reason: PREEMPTED[kind],
      action: kind === 'console' ? 'ConnectConsole' : 'ConnectVNC',
      note: `${kind} session of ${was}${client === undefined || client === '' ? '' : ` (${client})`} taken over by ${holder}`,
    });
  }

  /** Renew while the lease still names this session (a take-over ends our renewals). */
  private async renew(namespace: string, name: string, id: string): Promise<void> {
    const current = await this.read(namespace, name);
    if (current?.metadata.annotations?.[SESSION_ID_ANNOTATION] !== id) return;
    await this.options.leases.replace({ ...current, spec: { ...current.spec, renewTime: formatMicroTime(nowMicros(this.now)) } });
  }

  /** Delete the lease if it still names this session (never a successor's). */
  private async release(namespace: string, name: string, id: string): Promise<void> {
    const current = await this.read(namespace, name);
    if (current?.metadata.annotations?.[SESSION_ID_ANNOTATION] !== id) return;
    try {
      await this.options.leases.delete({ namespace, name }, { preconditions: { resourceVersion: current.metadata.resourceVersion } });
    } catch (err: unknown) {
      if (err instanceof NotFoundError || err instanceof ConflictError) return; // gone, or taken over meanwhile
      throw err;
    }
  }
}
