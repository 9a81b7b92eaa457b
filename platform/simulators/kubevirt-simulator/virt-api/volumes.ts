/**
 * What KubeVirt does on `addvolume` / `removevolume` (virt-api records the request, virt-controller
 * puts the volume and its disk into the running instance, virt-handler attaches it and reports it in
 * `status.volumeStatus`), played on the internal instance: add → the volume in `spec.volumes`, its
 * disk in `spec.domain.devices.disks`, and a `volumeStatus` entry that goes `Pending` then `Ready`
 * (target `sd<x>`, `hotplugVolume` with the attachment pod); remove → all three gone. The VM's
 * template is not touched: the controller owns the internal VM spec and syncs attachments itself.
 * A VM without a running instance has nothing to change (200, as KubeVirt persists it for the next start).
 * A VM whose guest is a real QEMU process here (`realGuest`) leaves virt-handler's part to the node
 * agent (`virt-handler/hotplug.ts`): add stops at `Pending`, remove leaves the entry `Detaching`, and the
 * node agent writes `Ready` once the guest has the disk, and drops the entry once the guest let it go.
 */
import { z } from 'zod';
import { BadRequestError, ConflictError, NotFoundError } from '../../../../shared/errors/index.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { conditionalMergePatch, type ResourceClient } from '../../../../shared/kube/index.js';

const AddVolumeOptions = z.looseObject({
  name: z.string().min(1),
  disk: z.looseObject({ name: z.string().optional() }),
  volumeSource: z.union([
    z.looseObject({ persistentVolumeClaim: z.looseObject({ claimName: z.string().min(1) }) }),
    z.looseObject({ containerDisk: z.looseObject({ image: z.string().min(1) }) }),
  ]),
  dryRun: z.array(z.literal('All')).optional(),
});
const RemoveVolumeOptions = z.looseObject({ name: z.string().min(1), dryRun: z.array(z.literal('All')).optional() });

type VolumeStatus = { name?: string; target?: string } & Record<string, unknown>;

export interface VolumeCalls {
  addVolume(namespace: string, vm: string, body: unknown): Promise<void>;
  removeVolume(namespace: string, vm: string, body: unknown): Promise<void>;
}

function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
  throw new BadRequestError(`${what}: ${problems}`);
}

/** The next free SCSI target of the instance (`sda` is the first). */
function nextTarget(statuses: readonly VolumeStatus[]): string {
  const used = new Set(statuses.map((s) => s.target));
  for (let i = 0; i < 26; i++) {
    const t = `sd${String.fromCharCode(97 + i)}`;
    if (!used.has(t)) return t;
  }
  throw new ConflictError('no free SCSI target left on the instance');
}

/** Without a real guest the entry goes at once; with one it is `Detaching` until the guest has let go. */
function statusesAfterRemove(statuses: readonly VolumeStatus[], name: string, real: boolean): VolumeStatus[] {
  if (!real) return statuses.filter((s) => s.name !== name);
  return statuses.map((s) =>
    s.name === name ? { ...s, phase: 'Detaching', reason: 'HotplugVolumeDetaching', message: `detaching hotplugged volume ${name} from the guest` } : s,
  );
}

export interface KubevirtVolumesOptions {
  /** Whether VM `<namespace>/<name>` runs a real guest here, whose node agent attaches and detaches for real. */
  readonly realGuest?: (namespace: string, vm: string) => boolean;
}

export function kubevirtVolumes(
  kvvmis: Pick<ResourceClient<InternalVirtualMachineInstance>, 'get' | 'mergePatch'>,
  options: KubevirtVolumesOptions = {},
): VolumeCalls {
  const realGuest = (namespace: string, vm: string): boolean => options.realGuest?.(namespace, vm) ?? false;
  /** Read the instance, change it, write spec and status together (no status subresource upstream); a conflict reads again. */
  async function change(namespace: string, vm: string, edit: (vmi: InternalVirtualMachineInstance) => object | undefined): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let vmi: InternalVirtualMachineInstance;
      try {
        vmi = await kvvmis.get({ namespace, name: vm });
      } catch (err: unknown) {
        if (err instanceof NotFoundError) return;
        throw err;
      }
      const patch = edit(vmi);
      if (patch === undefined) return;
      try {
        await kvvmis.mergePatch({ namespace, name: vm }, conditionalMergePatch(patch, vmi.metadata.resourceVersion));
        return;
      } catch (err: unknown) {
        if (!(err instanceof ConflictError) || attempt >= 5) throw err;
      }
    }
  }

  return {
    async addVolume(namespace, vm, body): Promise<void> {
      const opts = parse(AddVolumeOptions, body, 'AddVolumeOptions');
      if (opts.dryRun !== undefined) return;
      const statusesOf = (vmi: InternalVirtualMachineInstance): VolumeStatus[] => vmi.status?.volumeStatus ?? [];
      let target = '';
      await change(namespace, vm, (vmi) => {
        const statuses = statusesOf(vmi);
        const known = statuses.find((s) => s.name === opts.name);
        // Asked again (a caller that lost its answer): nothing new to do.
        if (known !== undefined && (vmi.spec.volumes ?? []).some((v) => v.name === opts.name)) {
          target = known.target ?? '';
          return undefined;
        }
        target = nextTarget(statuses);
        const devices = vmi.spec.domain?.devices ?? {};
        return {
          spec: {
            volumes: [...(vmi.spec.volumes ?? []).filter((v) => v.name !== opts.name), { name: opts.name, ...opts.volumeSource }],
            domain: { devices: { disks: [...(devices.disks ?? []).filter((d) => d.name !== opts.name), { ...opts.disk, name: opts.name }] } },
          },
          status: {
            volumeStatus: [
              ...statuses.filter((s) => s.name !== opts.name),
              { name: opts.name, target: '', phase: 'Pending', reason: 'PVCNotReady', message: 'hotplug volume requested', hotplugVolume: {} },
            ],
          },
        };
      });
      // virt-handler: the attachment pod mounted the volume, the guest sees it (a real guest's node agent says when).
      if (realGuest(namespace, vm)) return;
      await change(namespace, vm, (vmi) => {
        const statuses = statusesOf(vmi);
        const known = statuses.find((s) => s.name === opts.name);
        if (known === undefined || known['phase'] === 'Ready') return undefined;
        const ready = {
          name: opts.name,
          target: target === '' ? nextTarget(statuses.filter((s) => s.name !== opts.name)) : target,
          phase: 'Ready',
          reason: 'VolumeReady',
          message: `Successfully attach hotplugged volume ${opts.name} to VM`,
          hotplugVolume: { attachPodName: `hp-volume-${vm}`, attachPodUID: vmi.metadata.uid ?? '' },
        };
        return { status: { volumeStatus: statuses.map((s) => (s.name === opts.name ? ready : s)) } };
      });
    },

    async removeVolume(namespace, vm, body): Promise<void> {
      const opts = parse(RemoveVolumeOptions, body, 'RemoveVolumeOptions');
      if (opts.dryRun !== undefined) return;
      await change(namespace, vm, (vmi) => {
        const volume = (vmi.spec.volumes ?? []).find((v) => v.name === opts.name);
        if (volume === undefined) throw new BadRequestError(`unable to remove volume ${opts.name}: it does not exist on ${namespace}/${vm}`);
        const hotplugged = volume.persistentVolumeClaim?.hotpluggable === true || volume.containerDisk?.hotpluggable === true;
        if (!hotplugged) throw new BadRequestError(`unable to remove volume ${opts.name}: it is not hotpluggable`);
        return {
          spec: {
            volumes: (vmi.spec.volumes ?? []).filter((v) => v.name !== opts.name),
            domain: { devices: { disks: (vmi.spec.domain?.devices?.disks ?? []).filter((d) => d.name !== opts.name) } },
          },
          status: { volumeStatus: statusesAfterRemove(vmi.status?.volumeStatus ?? [], opts.name, realGuest(namespace, vm)) },
        };
      });
    },
  };
}
