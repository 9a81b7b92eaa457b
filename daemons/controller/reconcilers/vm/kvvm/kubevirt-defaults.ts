import type { InternalVirtualMachine } from '../../../../../shared/api/internal/resources.js';

type TemplateSpec = InternalVirtualMachine['spec']['template']['spec'];

/**
 * What virt-api's VM mutator fills in when we leave it empty (KubeVirt v1.6: the template's
 * `architecture` and machine type on every write, the firmware UUID on create; and, since it writes
 * the whole spec back from Go types, `metadata.creationTimestamp: null` in the template). We do not set these,
 * so the stored internal VM has them and the one we build does not. Carrying them over from the
 * stored object keeps a server default from reading as a change of ours (every running VM would
 * otherwise await a restart) and keeps our patch from removing them (a patch loop with the mutator,
 * and a new firmware UUID, i.e. a new SMBIOS identity, for the guest at its next start).
 */
export function withKubeVirtDefaults(desired: InternalVirtualMachine, stored: InternalVirtualMachine | undefined): InternalVirtualMachine {
  if (stored === undefined) return desired;
  const from = stored.spec.template.spec;
  const spec: TemplateSpec = { ...desired.spec.template.spec };
  if (spec['architecture'] === undefined && typeof from['architecture'] === 'string') spec['architecture'] = from['architecture'];
  const domain = { ...spec.domain };
  if ((domain.machine?.type ?? '') === '' && (from.domain.machine?.type ?? '') !== '') domain.machine = { ...domain.machine, type: from.domain.machine?.type };
  const uuid: unknown = from.domain.firmware?.['uuid'];
  if (typeof uuid === 'string' && domain.firmware?.['uuid'] === undefined) domain.firmware = { ...domain.firmware, uuid };
  spec.domain = domain;
  const template = { ...desired.spec.template, spec };
  const storedMeta = stored.spec.template.metadata;
  if (storedMeta !== undefined && 'creationTimestamp' in storedMeta && !('creationTimestamp' in (template.metadata ?? {}))) {
    template.metadata = { ...template.metadata, creationTimestamp: storedMeta['creationTimestamp'] };
  }
  return { ...desired, spec: { ...desired.spec, template } };
}
