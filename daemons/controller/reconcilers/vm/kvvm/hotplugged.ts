import type { InternalVirtualMachine } from '../../../../../shared/api/internal/resources.js';

type TemplateSpec = InternalVirtualMachine['spec']['template']['spec'];
type Volume = NonNullable<TemplateSpec['volumes']>[number];

/** A volume KubeVirt hot-plugged (a claim or data volume marked `hotpluggable`), not one we build. */
export function isHotplugged(v: Volume): boolean {
  const dataVolume = v['dataVolume'] as { hotpluggable?: unknown } | undefined;
  return v.persistentVolumeClaim?.hotpluggable === true || dataVolume?.hotpluggable === true;
}

/**
 * Volumes hot-plugged into the internal VM: real virt-controller applies an `addvolume` request of the
 * VM (virt-api writes it into `status.volumeRequests`, HotplugVolumes) to the template as a
 * `hotpluggable` claim and its disk, appended. No VM spec names them (an attachment does), so the
 * template we build carries the stored ones over, in their order, as the original does; only
 * `removevolume` takes them out. Without this every hot-plug would read as a change awaiting a restart,
 * and our patch would take the volume out of the template again.
 */
export function withHotpluggedVolumes(desired: InternalVirtualMachine, stored: InternalVirtualMachine | undefined): InternalVirtualMachine {
  const from = stored?.spec.template.spec;
  const spec = desired.spec.template.spec;
  const ours = new Set((spec.volumes ?? []).map((v) => v.name));
  const kept = (from?.volumes ?? []).filter((v) => isHotplugged(v) && !ours.has(v.name));
  if (kept.length === 0) return desired;
  const names = new Set(kept.map((v) => v.name));
  const disks = (from?.domain.devices?.disks ?? []).filter((d) => names.has(d.name));
  const devices = { ...spec.domain.devices, disks: [...(spec.domain.devices?.disks ?? []), ...disks] };
  const next: TemplateSpec = { ...spec, volumes: [...(spec.volumes ?? []), ...kept], domain: { ...spec.domain, devices } };
  return { ...desired, spec: { ...desired.spec, template: { ...desired.spec.template, spec: next } } };
}
