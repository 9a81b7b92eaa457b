/**
 * The demo: a VirtualMachineClass, an image imported over HTTP from a local server into DVCR (its
 * progress shown by the live view), a disk filled from it, a VM booting from that disk that the
 * controller, the scheduler, kwok and the KubeVirt simulator bring to Running, a
 * Restart and a Migrate operation, a blank data disk hot-plugged (Attached), a forbidden action by a user bound to the User role, a pool of 3
 * VMs scaled to 2 with `d8v scaledownwith` (pool.ts), the VM's launcher pod evicted as a drain does and
 * the VM evacuated by an Evict operation, a Start superseded by a Stop (evacuation.ts); then the
 * audit records of the create, the restart and the refusal. Every write goes through the apiserver
 * as the acting user (kubectl), so the webhooks, RBAC and the audit webhook see what a person would do.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeImage, serveDir, type FileServer } from '../../shared/testing/disk-images.js';
import { waitFor } from '../../shared/testing/wait.js';
import { errorMessage } from '../../shared/errors/index.js';
import type { KubeClient } from '../../shared/kube/index.js';
import type { Kubectl } from '../install.js';
import { evacuationDemo, supersedeDemo } from './evacuation.js';
import { poolDemo } from './pool.js';
import { auditRecords, operationRow, vmRow, type OperationRow, type VMRow } from './snapshot.js';
import {
  DEMO_CLASS,
  DEMO_DATA_DISK,
  DEMO_DISK,
  DEMO_IMAGE,
  DEMO_NAMESPACE,
  DISK_SIZE,
  DEMO_VM,
  OPERATOR,
  VIEWER,
  attachment,
  dataDisk,
  disk,
  image,
  namespace,
  operation,
  roleBinding,
  vm,
  vmClass,
} from './objects.js';

export interface DemoDeps {
  admin: KubeClient;
  /** kubectl as the platform's admin, as the operator (Admin role) and as the viewer (User role). */
  kubectl: { admin: Kubectl; operator: Kubectl; viewer: Kubectl };
  /** The audit function's output, when the platform's apiserver feeds it. */
  auditLog: string | undefined;
  say(line: string): void;
  /** When `npm start` began (ms since the epoch): the time to the VM Running is measured from it. */
  t0: number;
  /**
   * Where the demo's image is made and served from (an HTTP server on loopback, which the local
   * platform's importer pods reach); undefined: the disk is blank (a given cluster cannot reach it).
   */
  imageDir: string | undefined;
  /**
   * The bootable demo guest disk (raw, `tests/env/build-guest-image.sh`) when the VMs run as real QEMU
   * guests: the demo imports it (as qcow2) instead of a data-only image, and waits for its guest agent.
   */
  guestImage?: string | undefined;
  /** The kubeconfig `d8v` runs with in the pool step. */
  d8vKubeconfig: string;
}

export interface DemoResult {
  /** From `npm start` to the demo VM Running. */
  vmRunningAfterMs: number;
  /** The image's import, from its creation to Ready (undefined: no image, a blank disk). */
  imageImportMs: number | undefined;
  firstNode: string;
  migratedTo: string;
  ip: string;
}

const WAIT = { timeoutMs: 180_000, intervalMs: 200 };
const run = promisify(execFile);
/** The demo image: a qcow2 of this virtual size with this much data (its file is about as large as the data). */
const IMAGE = { name: 'demo.qcow2', virtualMiB: 64, dataKiB: 6 << 10 };
/** The image is served at this rate, like a remote mirror, so that its import lasts long enough to watch. */
const SERVE_BYTES_PER_SECOND = 3 << 20;
const yaml = (o: unknown): string => JSON.stringify(o);
const GROUP = '/apis/virtualization.deckhouse.io/v1alpha2';

async function getVM(admin: KubeClient): Promise<VMRow> {
  return vmRow(
    (await admin.rest.request({
      method: 'GET',
      path: `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachines/${DEMO_VM}`,
      what: 'get the demo VM',
    })) as Parameters<typeof vmRow>[0],
  );
}

async function getOp(admin: KubeClient, name: string): Promise<OperationRow> {
  const path = `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachineoperations/${name}`;
  return operationRow((await admin.rest.request({ method: 'GET', path, what: `get operation ${name}` })) as Parameters<typeof operationRow>[0]);
}

async function operationCompletes(d: DemoDeps, name: string): Promise<void> {
  await waitFor(
    `operation ${name} Completed`,
    async () => {
      const op = await getOp(d.admin, name);
      if (op.phase === 'Failed') throw new Error(`operation ${name} failed (${op.detail})`);
      return op.phase === 'Completed';
    },
    WAIT,
  );
}

const running = (v: VMRow): boolean => v.phase === 'Running' && v.node !== '' && v.ip !== '';

export async function runDemo(d: DemoDeps): Promise<DemoResult> {
  // The image is made (qemu-img) while the class gets ready.
  const serving = d.imageDir === undefined ? Promise.resolve(undefined) : serveImage(d, d.imageDir);
  try {
    return await storyUntilRunning(d, serving);
  } finally {
    await (await serving.catch(() => undefined))?.close();
  }
}

async function storyUntilRunning(d: DemoDeps, serving: Promise<ServedImage | undefined>): Promise<DemoResult> {
  const { admin, operator } = d.kubectl;
  d.say(`▶ namespace ${DEMO_NAMESPACE}: ${OPERATOR.name} gets the Admin role of the module, ${VIEWER.name} the User role`);
  await admin(['apply', '-f', '-'], yaml({ apiVersion: 'v1', kind: 'List', items: [namespace(), roleBinding(OPERATOR), roleBinding(VIEWER)] }));

  d.say(`▶ VirtualMachineClass ${DEMO_CLASS} (CPU model Nehalem, 1-4 cores)`);
  await admin(['apply', '-f', '-'], yaml(vmClass()));
  await waitFor(
    'the class Ready',
    async () => {
      const cls = (await d.admin.rest.request({ method: 'GET', path: `${GROUP}/virtualmachineclasses/${DEMO_CLASS}`, what: 'get the demo class' })) as {
        status?: { phase?: string };
      };
      return cls.status?.phase === 'Ready';
    },
    WAIT,
  );
  d.say(`✓ class ${DEMO_CLASS} Ready on the simulated nodes`);

  const server = await serving;
  let imageAt = 0;
  if (server !== undefined) {
    d.say(
      `▶ ${OPERATOR.name}: VirtualImage ${DEMO_IMAGE} from ${server.url} (qcow2, ${d.guestImage === undefined ? `${IMAGE.virtualMiB}Mi` : 'bootable'}, sha256 checked; served at ${SERVE_BYTES_PER_SECOND >> 20} MiB/s like a remote mirror), into DVCR`,
    );
    await operator(['apply', '-f', '-'], yaml(image(server.url, server.sha256)));
    imageAt = Date.now();
    d.say(`▶ ${OPERATOR.name}: VirtualDisk ${DEMO_DISK} (${DISK_SIZE}) from image ${DEMO_IMAGE}`);
    await operator(['apply', '-f', '-'], yaml(disk('image')));
  } else {
    d.say(`▶ ${OPERATOR.name}: VirtualDisk ${DEMO_DISK} (blank, ${DISK_SIZE}; no local image server is reachable from the cluster's pods)`);
    await operator(['apply', '-f', '-'], yaml(disk('blank')));
  }
  // The VM right away: it waits for its disk, as a user's would.
  d.say(`▶ ${OPERATOR.name}: VirtualMachine ${DEMO_VM} (1 core, 1Gi, runPolicy AlwaysOn) booting from ${DEMO_DISK}`);
  await operator(['apply', '-f', '-'], yaml(vm()));
  d.say(`▶ ${OPERATOR.name}: VirtualDisk ${DEMO_DATA_DISK} (blank, 100Mi), to be hot-plugged later`);
  await operator(['apply', '-f', '-'], yaml(dataDisk()));
  const imageImportMs = server === undefined ? undefined : await imageReady(d, imageAt);
  await diskReady(d);
  const first = await waitFor(
    'the VM Running',
    async () => {
      const v = await getVM(d.admin);
      return running(v) && v;
    },
    WAIT,
  );
  return await afterRunning(d, first, imageImportMs);
}

interface ServedImage extends FileServer {
  readonly url: string;
  readonly sha256: string;
}

/** The demo image, made with qemu-img (or the bootable guest disk converted to qcow2), on a local HTTP server. */
async function serveImage(d: DemoDeps, dir: string): Promise<ServedImage> {
  await mkdir(dir, { recursive: true });
  const file = d.guestImage === undefined ? makeImage(dir, IMAGE.name, 'qcow2', IMAGE.virtualMiB, IMAGE.dataKiB) : join(dir, IMAGE.name);
  if (d.guestImage !== undefined) {
    await run('qemu-img', ['convert', '-O', 'qcow2', d.guestImage, file]);
    d.say(`  the demo guest's bootable disk (Debian kernel, busybox, a login prompt, a guest agent) as qcow2: ${file}`);
  }
  const sha256 = createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
  const files = await serveDir(dir, { bytesPerSecond: SERVE_BYTES_PER_SECOND });
  if (d.guestImage === undefined) d.say(`  image made with qemu-img: ${file} (${IMAGE.virtualMiB} MiB virtual, ${IMAGE.dataKiB >> 10} MiB of data)`);
  return { ...files, url: `${files.url}/${IMAGE.name}`, sha256 };
}

type StorageStatus = {
  phase?: string;
  progress?: string;
  format?: string;
  size?: { unpacked?: string };
  capacity?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
} & Record<string, unknown>;

async function storageStatus(d: DemoDeps, plural: 'virtualimages' | 'virtualdisks', name: string): Promise<StorageStatus> {
  const o = (await d.admin.rest.request({ method: 'GET', path: `${GROUP}/namespaces/${DEMO_NAMESPACE}/${plural}/${name}`, what: `get ${plural} ${name}` })) as {
    status?: StorageStatus;
  };
  return o.status ?? {};
}

/** Wait for the image (a Failed one ends the demo with its reason); the live view shows its progress. */
async function imageReady(d: DemoDeps, since: number): Promise<number> {
  const st = await waitFor(
    `image ${DEMO_IMAGE} Ready`,
    async () => {
      const s = await storageStatus(d, 'virtualimages', DEMO_IMAGE);
      if (s.phase === 'Failed') throw new Error(`image ${DEMO_IMAGE} Failed: ${s.conditions?.find((c) => c.type === 'Ready')?.message ?? 'no reason given'}`);
      return s.phase === 'Ready' && s;
    },
    WAIT,
  );
  const took = Date.now() - since;
  const target = (st['target'] as { registryURL?: string } | undefined)?.registryURL ?? '?';
  d.say(`✓ image ${DEMO_IMAGE} Ready in ${(took / 1000).toFixed(1)} s: ${st.format ?? '?'}, ${st.size?.unpacked ?? '?'} unpacked, in DVCR at ${target}`);
  return took;
}

async function diskReady(d: DemoDeps): Promise<void> {
  const st = await waitFor(
    `disk ${DEMO_DISK} Ready`,
    async () => {
      const s = await storageStatus(d, 'virtualdisks', DEMO_DISK);
      if (s.phase === 'Failed') throw new Error(`disk ${DEMO_DISK} Failed: ${s.conditions?.find((c) => c.type === 'Ready')?.message ?? 'no reason given'}`);
      return s.phase === 'Ready' && s;
    },
    WAIT,
  );
  const target = (st['target'] as { persistentVolumeClaimName?: string } | undefined)?.persistentVolumeClaimName ?? '?';
  d.say(
    `✓ disk ${DEMO_DISK} Ready: ${st.capacity ?? '?'} on PVC ${target} (StorageClass ${typeof st['storageClassName'] === 'string' ? st['storageClassName'] : '?'})`,
  );
}

/** The data disk hot-plugged into the running VM: Attached once KubeVirt (the simulator's virt-api) reports the volume Ready. */
async function hotPlug(d: DemoDeps): Promise<void> {
  d.say(`▶ ${OPERATOR.name}: VirtualMachineBlockDeviceAttachment ${DEMO_DATA_DISK} (hot-plug ${DEMO_DATA_DISK} into ${DEMO_VM})`);
  await d.kubectl.operator(['apply', '-f', '-'], yaml(attachment()));
  const path = `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachineblockdeviceattachments/${DEMO_DATA_DISK}`;
  await waitFor(
    `attachment ${DEMO_DATA_DISK} Attached`,
    async () => {
      const a = (await d.admin.rest.request({ method: 'GET', path, what: 'get the demo attachment' })) as { status?: StorageStatus };
      if (a.status?.phase === 'Failed')
        throw new Error(`attachment ${DEMO_DATA_DISK} Failed: ${a.status.conditions?.find((c) => c.type === 'Attached')?.message ?? ''}`);
      return a.status?.phase === 'Attached';
    },
    WAIT,
  );
  d.say(`✓ ${DEMO_DATA_DISK} hot-plugged: attachment Attached, the volume Ready in the instance's volumeStatus`);
}

/** A real guest: its agent answers (it starts just before the login prompt), shown as the VM's AgentReady. */
async function guestAnswers(d: DemoDeps): Promise<void> {
  const since = Date.now();
  await waitFor(
    `${DEMO_VM}'s guest agent`,
    async () => {
      const v = (await d.admin.rest.request({
        method: 'GET',
        path: `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachines/${DEMO_VM}`,
        what: 'get the demo VM',
      })) as {
        status?: { conditions?: { type: string; status: string }[] };
      };
      return v.status?.conditions?.some((c) => c.type === 'AgentReady' && c.status === 'True');
    },
    WAIT,
  );
  const at = ((Date.now() - d.t0) / 1000).toFixed(1);
  d.say(
    `✓ ${DEMO_VM} is a real QEMU guest: its agent answers (AgentReady), ${at} s after npm start, ${((Date.now() - since) / 1000).toFixed(1)} s after Running; \`d8v console ${DEMO_VM} -n ${DEMO_NAMESPACE}\` shows its login prompt (root, no password), \`d8v ssh root@${DEMO_VM} -n ${DEMO_NAMESPACE}\` logs in over SSH`,
  );
}

async function afterRunning(d: DemoDeps, first: VMRow, imageImportMs: number | undefined): Promise<DemoResult> {
  const { operator, viewer } = d.kubectl;
  const vmRunningAfterMs = Date.now() - d.t0;
  d.say(`✓ ${DEMO_VM} Running on ${first.node} with IP ${first.ip}: ${(vmRunningAfterMs / 1000).toFixed(1)} s after npm start`);
  if (d.guestImage !== undefined) await guestAnswers(d);

  d.say(`▶ ${OPERATOR.name}: VirtualMachineOperation restart-${DEMO_VM} (Restart)`);
  await operator(['apply', '-f', '-'], yaml(operation(`restart-${DEMO_VM}`, 'Restart')));
  await operationCompletes(d, `restart-${DEMO_VM}`);
  const restarted = await waitFor(
    'the VM Running again',
    async () => {
      const v = await getVM(d.admin);
      return running(v) && v;
    },
    WAIT,
  );
  d.say(`✓ restarted: a new instance runs on ${restarted.node}`);

  d.say(`▶ ${OPERATOR.name}: VirtualMachineOperation migrate-${DEMO_VM} (Migrate, live)`);
  await operator(['apply', '-f', '-'], yaml(operation(`migrate-${DEMO_VM}`, 'Migrate')));
  await operationCompletes(d, `migrate-${DEMO_VM}`);
  const migrated = await waitFor(
    'the VM Running on another node',
    async () => {
      const v = await getVM(d.admin);
      return running(v) && v.node !== restarted.node && v;
    },
    WAIT,
  );
  d.say(`✓ migrated: ${restarted.node} → ${migrated.node}, same IP ${migrated.ip}`);
  await hotPlug(d);

  d.say(`▶ ${VIEWER.name} (User role) tries to stop ${DEMO_VM}`);
  const refusal = await viewer(['apply', '-f', '-'], yaml(operation(`stop-${DEMO_VM}`, 'Stop'))).then(
    () => undefined,
    (err: unknown) => errorMessage(err),
  );
  if (refusal === undefined || !/forbidden/i.test(refusal)) throw new Error(`${VIEWER.name} was not refused: ${refusal ?? 'the operation was created'}`);
  const why = /is forbidden: (.*)$/m.exec(refusal)?.[1] ?? 'forbidden';
  d.say(`✓ refused by RBAC (403): ${why}`);

  await poolDemo({ admin: d.admin, operator, d8vKubeconfig: d.d8vKubeconfig, say: (l) => d.say(l) });
  await evacuationDemo({ admin: d.admin, operator, say: (l) => d.say(l) });
  await supersedeDemo({ admin: d.admin, operator, say: (l) => d.say(l) });

  if (d.auditLog !== undefined) {
    const log = d.auditLog;
    const wanted = [
      `Virtual machine '${DEMO_VM}' has been created by '${OPERATOR.name}'`,
      `Virtual machine '${DEMO_VM}' has been restarted by '${OPERATOR.name}'`,
      `User '${VIEWER.name}' attempted to perform a forbidden operation`,
    ];
    await waitFor(
      'the audit records of the create, the restart and the refusal',
      async () => {
        const names = (await auditRecords(log)).map((r) => r.name);
        return wanted.every((w) => names.some((n) => n.startsWith(w)));
      },
      WAIT,
    );
    d.say('✓ audit records: created, restarted, forbidden (see AUDIT)');
  }
  return { vmRunningAfterMs, imageImportMs, firstNode: first.node, migratedTo: migrated.node, ip: migrated.ip };
}
