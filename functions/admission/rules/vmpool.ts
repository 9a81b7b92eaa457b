/**
 * VirtualMachinePool validation: the name leaves room for member suffixes, the VM template passes the
 * VM template checks, disk templates pass the disk checks; and /scale cannot shrink an Explicit pool.
 */
import { z } from 'zod';
import { GROUP } from '../../../shared/api/resources/common.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { VirtualMachinePoolSchema, type VirtualMachinePool } from '../../../shared/api/resources/vmpool.js';
import type { AdmissionInput } from '../decision.js';
import { runChecks, type Check } from './check.js';
import { nameAtMost } from './metadata.js';
import { diskSizeProblems, storageClassExists } from './storage.js';
import { schemaParser, type Validator } from './validator.js';
import { templateChecks } from './virtualmachine/index.js';

const TEMPLATE_PATH = 'spec.virtualMachineTemplate';

/** The pool's template as the VM each member will be, for the VM template checks. */
function memberOf(pool: VirtualMachinePool | undefined): VirtualMachine | undefined {
  if (pool === undefined) return undefined;
  const { metadata, spec } = pool.spec.virtualMachineTemplate;
  return {
    apiVersion: pool.apiVersion,
    kind: 'VirtualMachine',
    metadata: { name: pool.metadata.name, namespace: pool.metadata.namespace, labels: metadata?.labels, annotations: metadata?.annotations },
    spec: spec as VirtualMachine['spec'],
  };
}

const vmTemplate: Check<VirtualMachinePool> = {
  name: 'the VM template passes the VirtualMachine checks',
  run: async (input, ctx, out) => {
    const object = memberOf(input.object) as VirtualMachine;
    const member: AdmissionInput<VirtualMachine> = { ...input, object, oldObject: memberOf(input.oldObject) };
    const { findings, failures } = await runChecks(templateChecks, member, ctx);
    const [failure] = failures;
    if (failure !== undefined) throw failure.error;
    out.absorb(TEMPLATE_PATH, findings);
  },
};

const diskTemplates: Check<VirtualMachinePool> = {
  name: 'the disk templates pass the VirtualDisk checks',
  run: async ({ object }, ctx, out) => {
    await Promise.all(
      object.spec.virtualDiskTemplates.map(async (t, i) => {
        const path = `spec.virtualDiskTemplates[${i}].spec`;
        diskSizeProblems(t.spec, path, out);
        await storageClassExists(t.spec.persistentVolumeClaim?.storageClassName, `${path}.persistentVolumeClaim.storageClassName`, ctx, out);
      }),
    );
  },
};

export const vmPoolValidator: Validator<VirtualMachinePool> = {
  group: GROUP,
  kind: 'VirtualMachinePool',
  parse: schemaParser(VirtualMachinePoolSchema),
  checks: [nameAtMost(57), vmTemplate, diskTemplates],
};

/** autoscaling/v1 Scale, as the apiserver sends it for the /scale subresource. */
const ScaleSchema = z.looseObject({
  apiVersion: z.literal('autoscaling/v1'),
  kind: z.literal('Scale'),
  metadata: z.looseObject({ name: z.string().optional(), namespace: z.string().optional() }),
  spec: z.looseObject({ replicas: z.int().min(0).optional() }),
});
export type Scale = z.infer<typeof ScaleSchema>;

const explicitScaleDown: Check<Scale> = {
  name: 'an Explicit pool is not scaled down through /scale',
  run: async ({ object, oldObject, namespace, name }, { lookups }, out) => {
    if (oldObject === undefined) return;
    const [now, before] = [object.spec.replicas ?? 0, oldObject.spec.replicas ?? 0];
    if (now >= before) return;
    const pool = await lookups.virtualMachinePool(namespace ?? '', object.metadata.name ?? name);
    if (pool?.spec.scaleDownPolicy !== 'Explicit') return;
    out.deny('spec.replicas', `cannot decrease from ${before} to ${now}: the pool has scaleDownPolicy Explicit, delete the VMs to remove instead`);
  },
};

export const vmPoolScaleValidator: Validator<Scale> = {
  group: 'autoscaling',
  kind: 'Scale',
  parse: schemaParser(ScaleSchema),
  checks: [explicitScaleDown],
};
