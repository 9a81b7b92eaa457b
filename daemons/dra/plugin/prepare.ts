/**
 * NodePrepareResources / NodeUnprepareResources, per claim: one bad claim gets its own error and
 * never fails the others; both are idempotent (kubelet retries). Prepare reads the ResourceClaim (from
 * the informer cache when it has it, claims.ts),
 * takes the results allocated to this driver, checks each device is on this node and free (or, with
 * the USB/IP gateway on, imports a device of another node's pool over USB/IP, usbip/remote.ts), writes
 * the claim's CDI spec, records the host address on the claim (annotation
 * `usb.virtualization.deckhouse.io/device-addresses`, as the original) and checkpoints the claim.
 * The annotation of a claim of this node's own devices is written ahead, as soon as the informer sees
 * the allocation (annotateAhead), so that kubelet's prepare, which comes after the pod is bound, finds
 * it written and makes no apiserver round trip; a prepare still writes it when that did not happen.
 * Unprepare detaches the claim's imported devices, then removes the CDI spec and the checkpoint
 * entry; an unknown claim is a success.
 */
import { AppError, NotFoundError, errorMessage } from '../../../shared/errors/index.js';
import type { Logger } from '../../../shared/log/index.js';
import { usbAddress } from '../devices.js';
import type { UsbDeviceInfo } from '../discovery/index.js';
import type { ResourceClaim } from '../../../shared/api/k8s/resource.js';
import type { DraMetrics } from '../metrics.js';
import { CdiDir, COMMON_DEVICE, cdiDeviceId, claimDeviceName, claimSpec, commonSpec, type CdiUsbDevice } from './cdi.js';
import type { Checkpoint, CheckpointDevice, PreparedClaim } from './checkpoint.js';
import type { ClaimSource } from './claims.js';
import type { Claim, PrepareResult, UnprepareResult } from './protos.js';
import type { AllocatedDevice } from '../usbip/gateway.js';
import type { RemoteImports } from '../usbip/remote.js';

export const DEVICE_ADDRESSES_ANNOTATION = 'usb.virtualization.deckhouse.io/device-addresses';
export const DEVICE_USER_ANNOTATION = 'usb.virtualization.deckhouse.io/device-user';
export const DEVICE_GROUP_ANNOTATION = 'usb.virtualization.deckhouse.io/device-group';

/** A claim that cannot be prepared; the message goes to kubelet as the claim's error. */
export class ClaimError extends AppError {
  readonly code = 'CLAIM_NOT_PREPARED';
  readonly status = 422;
}

export interface PreparerOptions {
  driver: string;
  nodeName: string;
  /** The claims kubelet names: read from the informer cache when it has them (claims.ts), else the apiserver. */
  claims: ClaimSource;
  /** The node's allocatable devices now, by DRA device name. */
  devices: () => ReadonlyMap<string, UsbDeviceInfo>;
  cdi: CdiDir;
  checkpoint: Checkpoint;
  log: Logger;
  metrics?: DraMetrics;
  /** The USB/IP import side once the gateway runs; undefined (or absent) = devices of other pools are refused. */
  remote?: () => RemoteImportPort | undefined;
}

/** What the preparer needs of the USB/IP import side (usbip/remote.ts RemoteImports). */
export type RemoteImportPort = Pick<RemoteImports, 'plan' | 'attach' | 'detach'>;

/** One device of a claim as the CDI spec and the checkpoint need it. */
interface ClaimDevice {
  requests: string[];
  pool: string;
  busId: string;
  busNum: number;
  devNum: number;
  devicePath: string;
  major?: number | undefined;
  minor?: number | undefined;
  importedFrom?: string;
}

function checkpointDevice(claimUid: string, deviceName: string, e: ClaimDevice): CheckpointDevice {
  return {
    requestNames: e.requests,
    poolName: e.pool,
    deviceName,
    cdiDeviceIds: [cdiDeviceId(COMMON_DEVICE), cdiDeviceId(claimDeviceName(claimUid, deviceName))],
    busId: e.busId,
    usbAddress: usbAddress(e),
    ...(e.importedFrom === undefined ? {} : { importedFrom: e.importedFrom }),
  };
}

/** The annotation value: each device's host address, sorted by device name. */
function addressesValue(devices: readonly { deviceName: string; usbAddress: string }[]): string {
  return JSON.stringify(
    [...devices].sort((a, b) => a.deviceName.localeCompare(b.deviceName)).map((d) => ({ deviceName: d.deviceName, usbAddress: d.usbAddress })),
  );
}

export class Preparer {
  private queue: Promise<unknown> = Promise.resolve();
  private dirty = false;
  /** Annotations written ahead of the prepare, by claim uid: the value and whether the write succeeded. */
  private readonly ahead = new Map<string, { value: string; written: Promise<boolean> }>();

  constructor(private readonly opts: PreparerOptions) {}

  /** Load the checkpoint, drop the entries whose CDI spec is gone, write the common CDI spec; before serving. */
  async start(): Promise<void> {
    await this.opts.checkpoint.load();
    await this.dropUnbacked();
    await this.opts.cdi.write(COMMON_DEVICE, commonSpec(this.opts.nodeName, this.opts.driver));
    this.opts.metrics?.preparedClaims.set(undefined, this.opts.checkpoint.size);
  }

  /**
   * A checkpoint entry whose CDI spec file is missing describes a prepare that is no longer there: the
   * node rebooted (/var/run/cdi is a tmpfs; STATE_DIR should be one too, then there is no entry left
   * to find) or the spec was removed. It is dropped, not re-written: the device nodes and numbers it
   * recorded may now belong to another device (after a reboot bus and device numbers are handed out
   * again, and vhci ports are gone), so the next prepare of the claim reads the claim and sysfs afresh
   * instead of answering "already prepared" with a spec that does not exist. Its devices imported over
   * USB/IP are detached as well (nothing when the kernel already lost them), so no vhci port stays held
   * for a claim this node no longer knows; a repeated prepare imports them again.
   */
  private async dropUnbacked(): Promise<void> {
    const dropped: string[] = [];
    for (const [uid, prepared] of this.opts.checkpoint.entries()) {
      if (prepared.devices.length === 0 || (await this.opts.cdi.has(uid))) continue;
      this.opts.checkpoint.delete(uid);
      dropped.push(uid);
      const { detached, errors } = await this.detachImportedOf(uid, prepared);
      this.opts.log.warn(
        { claim: `${prepared.namespace}/${prepared.name}`, uid, spec: this.opts.cdi.pathOf(uid), detached, errors },
        'dropping a checkpointed claim whose CDI spec is gone (node rebooted?): the next prepare does it again',
      );
    }
    // A failed write is logged and retried at the next change (dirty); a restart before that drops them again.
    if (dropped.length > 0) await this.save(true);
  }

  prepare(claims: readonly Claim[]): Promise<Record<string, PrepareResult>> {
    return this.serialized(async () => {
      const out: Record<string, PrepareResult> = {};
      for (const claim of claims) {
        if (out[claim.uid] !== undefined && claim.uid !== '') continue;
        try {
          const devices = await this.prepareOne(claim);
          out[claim.uid] = {
            devices: devices.map((d) => ({ request_names: d.requestNames, pool_name: d.poolName, device_name: d.deviceName, cdi_device_ids: d.cdiDeviceIds })),
          };
        } catch (err: unknown) {
          out[claim.uid] = { devices: [], error: this.claimError('prepare', claim, err) };
        }
      }
      // A claim that failed after its checkpoint was written left the file ahead of memory.
      await this.save(false);
      this.count('prepare', out);
      return out;
    });
  }

  unprepare(claims: readonly Claim[]): Promise<Record<string, UnprepareResult>> {
    return this.serialized(async () => {
      const out: Record<string, UnprepareResult> = {};
      const removed: string[] = [];
      for (const claim of claims) {
        try {
          if (!claim.uid) throw new ClaimError('the claim has no uid');
          await this.detachImported(claim);
          await this.opts.cdi.remove(claim.uid);
          if (this.opts.checkpoint.delete(claim.uid)) removed.push(claim.uid);
          else this.opts.log.debug({ claim: claim.uid }, 'unprepare of a claim not prepared here: nothing to do');
          out[claim.uid] = { error: '' };
        } catch (err: unknown) {
          out[claim.uid] = { error: this.claimError('unprepare', claim, err) };
        }
      }
      const failed = await this.save(removed.length > 0);
      if (failed !== undefined) for (const uid of removed) out[uid] = { error: `the checkpoint of prepared claims could not be written: ${failed}` };
      this.count('unprepare', out);
      return out;
    });
  }

  /** Prepare one claim; its CDI spec, then its checkpoint, are written before the answer (the annotation meanwhile). */
  private async prepareOne(claim: Claim): Promise<CheckpointDevice[]> {
    if (!claim.uid) throw new ClaimError('the claim has no uid');
    if (!claim.namespace || !claim.name) throw new ClaimError(`claim ${claim.uid} has no namespace or name`);
    const known = this.opts.checkpoint.get(claim.uid);
    if (known !== undefined) return known.devices;

    let rc: ResourceClaim;
    try {
      rc = await this.opts.claims.read({ namespace: claim.namespace, name: claim.name, uid: claim.uid });
    } catch (err: unknown) {
      if (err instanceof NotFoundError) throw new ClaimError(`ResourceClaim ${claim.namespace}/${claim.name} not found`);
      throw err;
    }
    if (rc.metadata.uid !== claim.uid)
      throw new ClaimError(`ResourceClaim ${claim.namespace}/${claim.name} has uid ${rc.metadata.uid ?? '(none)'}, not ${claim.uid} (re-created?)`);
    const results = rc.status?.allocation?.devices?.results;
    if (results === undefined) throw new ClaimError(`ResourceClaim ${claim.namespace}/${claim.name} is not allocated`);

    const remote = this.opts.remote?.();
    const { byDevice, remoteResults } = this.localDevices(results, remote !== undefined);
    // Remote devices last: nothing is imported for a claim whose local devices are refused.
    const imported = remote === undefined ? [] : await this.importRemote(remote, remoteResults, byDevice);

    const annotations = rc.metadata.annotations ?? {};
    const owner = { uid: this.ownerId(annotations, DEVICE_USER_ANNOTATION, claim), gid: this.ownerId(annotations, DEVICE_GROUP_ANNOTATION, claim) };
    const cdiDevices: CdiUsbDevice[] = [...byDevice].map(([deviceName, d]) => ({
      deviceName,
      devicePath: d.devicePath,
      usbAddress: usbAddress(d),
      major: d.major,
      minor: d.minor,
    }));
    const devices = [...byDevice].map(([deviceName, e]) => checkpointDevice(claim.uid, deviceName, e));
    const prepared: PreparedClaim = { namespace: claim.namespace, name: claim.name, devices };
    this.opts.checkpoint.set(claim.uid, prepared);
    // The claim's address annotation goes to the apiserver while the files are written. The spec is
    // written before the checkpoint that names it (a restart in between finds a spec without entry,
    // which the repeated prepare rewrites, never an entry without spec; start() drops such entries
    // anyway). On tmpfs (CDI_ROOT, STATE_DIR) both take a fraction of a millisecond (state/atomic-file.ts).
    const files = async (): Promise<string | undefined> => {
      if (devices.length > 0) await this.opts.cdi.write(claim.uid, claimSpec(claim.uid, cdiDevices, owner));
      return this.save(true);
    };
    const [written, annotation] = await Promise.allSettled([files(), devices.length > 0 ? this.annotate(rc, claim, devices) : Promise.resolve()]);
    const failure = written.status === 'rejected' ? (written.reason as unknown) : annotation.status === 'rejected' ? (annotation.reason as unknown) : undefined;
    const notSaved = written.status === 'fulfilled' ? written.value : undefined;
    if (failure !== undefined || notSaved !== undefined) {
      this.opts.checkpoint.delete(claim.uid);
      this.dirty = true;
      await this.undoImports(remote, imported, claim);
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(errorMessage(failure));
      throw new Error(`the checkpoint of prepared claims could not be written: ${notSaved ?? ''}`);
    }
    return devices;
  }

  /** The claim's devices of this node's pool, checked; those of other pools set aside when the gateway runs (else refused). */
  private localDevices(results: readonly AllocatedDevice[], gateway: boolean): { byDevice: Map<string, ClaimDevice>; remoteResults: AllocatedDevice[] } {
    const available = this.opts.devices();
    const byDevice = new Map<string, ClaimDevice>();
    const remoteResults: AllocatedDevice[] = [];
    for (const r of results.filter((x) => x.driver === this.opts.driver)) {
      const holder = this.opts.checkpoint.holderOf(r.device);
      if (r.pool !== this.opts.nodeName) {
        if (!gateway) {
          throw new ClaimError(
            `device ${r.device} is allocated from pool ${r.pool}, not from this node's pool ${this.opts.nodeName} (USB/IP gateway allocations are not prepared by this driver)`,
          );
        }
        if (holder !== undefined) throw new ClaimError(`device ${r.device} is already prepared for claim ${holder}`);
        remoteResults.push(r);
        continue;
      }
      const info = available.get(r.device);
      if (info === undefined) throw new ClaimError(`requested device ${r.device} is not allocatable on node ${this.opts.nodeName} (unplugged?)`);
      if (holder !== undefined) throw new ClaimError(`device ${r.device} is already prepared for claim ${holder}`);
      const entry = byDevice.get(r.device);
      if (entry) entry.requests.push(r.request);
      else byDevice.set(r.device, { requests: [r.request], pool: r.pool, ...info });
    }
    return { byDevice, remoteResults };
  }

  /** Import the devices of other pools over USB/IP into `byDevice`; their names. One failure fails the claim (nothing stays attached). */
  private async importRemote(remote: RemoteImportPort, results: readonly AllocatedDevice[], byDevice: Map<string, ClaimDevice>): Promise<string[]> {
    if (results.length === 0) return [];
    const outcome = await remote.attach(await remote.plan(results));
    if (outcome.kind === 'failed') throw new ClaimError(`USB/IP import refused or failed: ${outcome.reasons.join('; ')}`);
    for (const d of outcome.devices) {
      const mine = results.filter((r) => r.device === d.device);
      byDevice.set(d.device, {
        requests: mine.map((r) => r.request),
        pool: mine[0]?.pool ?? d.exportNode,
        busId: d.busId,
        importedFrom: d.exportNode,
        ...d.node,
      });
    }
    return outcome.devices.map((d) => d.device);
  }

  /** Detach what a claim that failed late had imported (logged when that fails too). */
  private async undoImports(remote: RemoteImportPort | undefined, imported: readonly string[], claim: Claim): Promise<void> {
    if (remote === undefined || imported.length === 0) return;
    const errors = await remote.detach(imported);
    if (errors.length > 0) this.opts.log.error({ claim: claim.uid, errors }, 'could not detach the devices imported for a claim that failed');
  }

  /** Detach the devices a prepared claim imported over USB/IP; the claim stays prepared while one cannot be detached. */
  private async detachImported(claim: Claim): Promise<void> {
    const { errors } = await this.detachImportedOf(claim.uid, this.opts.checkpoint.get(claim.uid));
    if (errors.length > 0) throw new ClaimError(errors.join('; '));
  }

  /** Detach what a checkpoint entry imported over USB/IP: the devices detached and the errors. */
  private async detachImportedOf(uid: string, prepared: PreparedClaim | undefined): Promise<{ detached: string[]; errors: string[] }> {
    const devices = (prepared?.devices ?? []).filter((d) => d.importedFrom !== undefined).map((d) => d.deviceName);
    if (devices.length === 0) return { detached: [], errors: [] };
    const remote = this.opts.remote?.();
    if (remote === undefined) {
      // Refusing would block the pod's deletion for good; the vhci ports stay used until the gateway runs again.
      this.opts.log.error({ claim: uid, devices }, 'devices imported over USB/IP but the gateway is off: not detached');
      return { detached: [], errors: [] };
    }
    return { detached: devices, errors: await remote.detach(devices) };
  }

  /**
   * Write the address annotation of a claim allocated here as soon as the informer sees it, when all
   * its devices are this node's and present (an import's address is known only at prepare). Nothing
   * when the claim carries the value, is prepared, or the same write is under way. A failed write is
   * logged; the prepare then makes it.
   */
  annotateAhead(rc: ResourceClaim): void {
    const { uid, namespace, name } = rc.metadata;
    if (!uid || !namespace || !name || this.opts.checkpoint.get(uid) !== undefined) return;
    const results = rc.status?.allocation?.devices?.results?.filter((r) => r.driver === this.opts.driver) ?? [];
    if (results.length === 0 || results.some((r) => r.pool !== this.opts.nodeName)) return;
    const available = this.opts.devices();
    const devices: { deviceName: string; usbAddress: string }[] = [];
    for (const deviceName of new Set(results.map((r) => r.device))) {
      const info = available.get(deviceName);
      if (info === undefined) return;
      devices.push({ deviceName, usbAddress: usbAddress(info) });
    }
    const value = addressesValue(devices);
    if (rc.metadata.annotations?.[DEVICE_ADDRESSES_ANNOTATION] === value || this.ahead.get(uid)?.value === value) return;
    const written = this.writeAddresses({ namespace, name }, value, 'ahead').then(
      () => true,
      (err: unknown) => {
        this.opts.log.warn({ claim: `${namespace}/${name}`, err }, 'writing the address annotation ahead of the prepare failed; the prepare writes it');
        return false;
      },
    );
    this.ahead.set(uid, { value, written });
  }

  /** Forget what was written ahead for a claim deleted or no longer allocated here. */
  forgetAhead(uid: string): void {
    this.ahead.delete(uid);
  }

  /** The host addresses on the claim; written only when they differ and were not written ahead. */
  private async annotate(rc: ResourceClaim, claim: Claim, devices: readonly CheckpointDevice[]): Promise<void> {
    const value = addressesValue(devices);
    const ahead = this.ahead.get(claim.uid);
    this.ahead.delete(claim.uid);
    if (rc.metadata.annotations?.[DEVICE_ADDRESSES_ANNOTATION] === value) return;
    if (ahead?.value === value && (await ahead.written)) return;
    await this.writeAddresses(claim, value, 'prepare');
  }

  private async writeAddresses(ref: { namespace: string; name: string }, value: string, when: 'ahead' | 'prepare'): Promise<void> {
    await this.opts.claims.mergePatch({ namespace: ref.namespace, name: ref.name }, { metadata: { annotations: { [DEVICE_ADDRESSES_ANNOTATION]: value } } });
    this.opts.metrics?.addressWrites.inc({ when });
  }

  /** A uint32 owner id from a claim annotation; a bad value is logged and left out. */
  private ownerId(annotations: Record<string, string>, key: string, claim: Claim): number | undefined {
    const text = annotations[key];
    if (text === undefined) return undefined;
    const n = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
    if (Number.isInteger(n) && n <= 0xffffffff) return n;
    this.opts.log.warn({ claim: `${claim.namespace}/${claim.name}`, annotation: key, value: text }, 'ignoring an owner annotation that is not a uint32');
    return undefined;
  }

  /** Save when something changed or an earlier save failed; the failure text, or undefined. */
  private async save(changed: boolean): Promise<string | undefined> {
    if (!changed && !this.dirty) return undefined;
    try {
      await this.opts.checkpoint.save();
      this.dirty = false;
      this.opts.metrics?.preparedClaims.set(undefined, this.opts.checkpoint.size);
      return undefined;
    } catch (err: unknown) {
      this.dirty = true;
      this.opts.log.error({ err, path: this.opts.checkpoint.path }, 'writing the checkpoint failed');
      return errorMessage(err);
    }
  }

  private claimError(method: string, claim: Claim, err: unknown): string {
    const message = errorMessage(err);
    const level = err instanceof ClaimError ? 'warn' : 'error';
    this.opts.log[level]({ claim: `${claim.namespace}/${claim.name}`, uid: claim.uid, err }, `${method} failed for a claim`);
    return message;
  }

  private count(method: string, out: Record<string, { error?: string }>): void {
    for (const r of Object.values(out)) this.opts.metrics?.claimResults.inc({ method, result: r.error ? 'error' : 'ok' });
  }

  /** kubelet's calls one at a time, as the Go helper does. */
  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
