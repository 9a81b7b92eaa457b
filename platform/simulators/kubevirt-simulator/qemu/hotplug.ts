/**
 * Disk hot-plug into a running QEMU guest over QMP, as libvirt does it for KubeVirt's hot-plugged
 * volumes: plug is `blockdev-add` (file node, then format node) and `device_add` of a virtio-blk disk
 * on a free PCIe root port (`plan.ts`, `hp<n>`); unplug is `device_del`, then, once the guest has let
 * go (QMP's `DEVICE_DELETED` for the device), `blockdev-del` of its nodes. A step that fails undoes
 * what it added, so the guest keeps running as it was; errors name the disk and QEMU's answer.
 */
import type { GuestDiskState, QemuGuest, QmpEvent } from './guest-process.js';
import { HOTPLUG_PORTS, hotplugPort } from './plan.js';

export class HotplugError extends Error {
  readonly code = 'GUEST_HOTPLUG';
}

export interface HotplugDisk {
  /** The volume's name in the instance (the device id in the guest). */
  readonly name: string;
  readonly file: string;
  readonly format: 'raw' | 'qcow2';
  readonly readOnly?: boolean | undefined;
}

/** How long one QMP command may take, and how long the guest may take to release an unplugged disk. */
const QMP_TIMEOUT_MS = 10_000;
/** Short: the QMP session (and with it every other QMP user of the guest) waits meanwhile; a later step asks again. */
export const RELEASE_TIMEOUT_MS = 20_000;

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The first hot-plug port no disk of the guest sits on. */
function freePort(guest: QemuGuest): string {
  const used = new Set([...guest.disks.values()].map((d) => d.port));
  for (let i = 0; i < HOTPLUG_PORTS; i++) if (!used.has(hotplugPort(i))) return hotplugPort(i);
  throw new HotplugError(`no free hot-plug port left in the guest (it has ${HOTPLUG_PORTS})`);
}

/** Plug `disk` into the running guest; nothing happens when the guest has a disk of that name. */
export async function plugDisk(guest: QemuGuest, disk: HotplugDisk): Promise<void> {
  if (guest.disks.has(disk.name)) return;
  if (!guest.running) throw new HotplugError(`cannot hot-plug ${disk.name}: the guest is not running`);
  const port = freePort(guest);
  const fileNode = guest.nextNodeName('hpf');
  const formatNode = guest.nextNodeName('hpd');
  const readOnly = disk.readOnly === true ? { 'read-only': true } : {};
  await guest
    .qmp(async (run) => {
      const added: string[] = [];
      try {
        await run('blockdev-add', { driver: 'file', filename: disk.file, 'node-name': fileNode, ...readOnly });
        added.unshift(fileNode);
        await run('blockdev-add', { driver: disk.format, file: fileNode, 'node-name': formatNode, ...readOnly });
        added.unshift(formatNode);
        await run('device_add', { driver: 'virtio-blk-pci', drive: formatNode, id: disk.name, bus: port });
      } catch (err: unknown) {
        // Undo the nodes this attempt added; the guest goes on as before.
        for (const node of added) await run('blockdev-del', { 'node-name': node }).catch(() => undefined);
        throw err;
      }
    }, QMP_TIMEOUT_MS)
    .catch((err: unknown) => {
      throw new HotplugError(`hot-plug of ${disk.name} into the guest failed: ${message(err)}`, { cause: err });
    });
  guest.disks.set(disk.name, { port, nodes: [formatNode, fileNode] });
}

/**
 * Unplug the guest's disk `name` and wait until the guest released it (`DEVICE_DELETED`), then drop
 * its block nodes. A disk the guest does not have is done; one on the root complex cannot be unplugged.
 */
export async function unplugDisk(guest: QemuGuest, name: string, releaseTimeoutMs = RELEASE_TIMEOUT_MS): Promise<void> {
  const disk = guest.disks.get(name);
  if (disk === undefined) return;
  if (disk.port === undefined) throw new HotplugError(`cannot unplug ${name}: the guest started with it on a port without hot-plug`);
  if (!guest.running) {
    guest.disks.delete(name);
    return;
  }
  await unplug(guest, name, disk, releaseTimeoutMs).catch((err: unknown) => {
    throw err instanceof HotplugError ? err : new HotplugError(`unplug of ${name} from the guest failed: ${message(err)}`, { cause: err });
  });
  guest.disks.delete(name);
}

async function unplug(guest: QemuGuest, name: string, disk: GuestDiskState, releaseTimeoutMs: number): Promise<void> {
  let released: () => void = () => undefined;
  const gone = new Promise<void>((resolve) => (released = resolve));
  const onEvent = (e: QmpEvent): void => {
    if (e['event'] === 'DEVICE_DELETED' && (e['data'] as { device?: unknown } | undefined)?.device === name) released();
  };
  await guest.qmp(
    async (run) => {
      const present = ((await run('qom-list', { path: '/machine/peripheral' })) as { name: string }[]).some((p) => p.name === name);
      if (present) {
        // Asked before (an earlier wait ran out): QEMU refuses a second request; wait for the first.
        if (disk.unplugging !== true) await run('device_del', { id: name });
        guest.disks.set(name, { ...disk, unplugging: true });
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new HotplugError(`unplug of ${name}: the guest did not release the disk within ${releaseTimeoutMs} ms`)),
            releaseTimeoutMs,
          );
        });
        try {
          await Promise.race([gone, timeout]);
        } finally {
          clearTimeout(timer);
        }
      }
      const nodes = [...disk.nodes];
      while (nodes.length > 0) {
        await run('blockdev-del', { 'node-name': nodes[0] });
        nodes.shift();
        guest.disks.set(name, { ...disk, nodes: [...nodes], unplugging: true });
      }
    },
    QMP_TIMEOUT_MS,
    onEvent,
  );
}
