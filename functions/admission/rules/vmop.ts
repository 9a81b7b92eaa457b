/** VirtualMachineOperation validation (on create): node selectors, one active operation per VM, CE limits. */
import { GROUP } from '../../../shared/api/resources/common.js';
import { VirtualMachineOperationSchema, type VirtualMachineOperation } from '../../../shared/api/resources/vmop.js';
import { supersedes } from '../../../shared/api/vmop-supersede.js';
import type { Findings } from '../decision.js';
import { checkLabelMap } from '../lib/selectors.js';
import type { RuleContext } from '../lookups.js';
import { onCreate, type Check } from './check.js';
import { schemaParser, type Validator } from './validator.js';

type Vmop = VirtualMachineOperation;
const FINISHED = new Set(['Completed', 'Failed', 'Superseded']);

const nodeSelector: Check<Vmop> = onCreate({
  name: 'the migration node selector is allowed and valid',
  run: ({ object }, { cluster }, out) => {
    const selector = object.spec.migrate?.nodeSelector;
    if (selector === undefined) return;
    if (cluster.edition === 'CE') out.deny('spec.migrate.nodeSelector', 'is not available in the CE edition');
    checkLabelMap(selector, 'spec.migrate.nodeSelector', out);
  },
});

const oneActive: Check<Vmop> = onCreate({
  name: 'no other operation is in progress for the VM',
  run: async ({ object, namespace }, { lookups }, out) => {
    const active = (await lookups.operations(namespace ?? '')).filter(
      (o) =>
        o.spec.virtualMachineName === object.spec.virtualMachineName &&
        o.metadata.name !== object.metadata.name &&
        o.metadata.deletionTimestamp === undefined &&
        !FINISHED.has(o.status?.phase ?? ''),
    );
    for (const o of active) {
      if (supersedes(o.spec, object.spec)) continue;
      out.deny(
        'spec.virtualMachineName',
        `VirtualMachineOperation ${o.metadata.name ?? ''} (${o.spec.type}) is still in progress for VirtualMachine ${object.spec.virtualMachineName}`,
      );
    }
  },
});

const ceLocalDisks: Check<Vmop> = onCreate({
  name: 'in CE a migrated VM has no local (ReadWriteOnce) disks',
  run: async ({ object, namespace }, ctx, out) => {
    if (ctx.cluster.edition !== 'CE' || (object.spec.type !== 'Migrate' && object.spec.type !== 'Evict')) return;
    const vm = await ctx.lookups.virtualMachine(namespace ?? '', object.spec.virtualMachineName);
    const disks = (vm?.spec.blockDeviceRefs ?? []).filter((r) => r.kind === 'VirtualDisk');
    await Promise.all(disks.map((d) => localDisk(namespace ?? '', d.name, ctx, out)));
  },
});

async function localDisk(namespace: string, name: string, ctx: RuleContext, out: Findings): Promise<void> {
  const disk = await ctx.lookups.virtualDisk(namespace, name);
  const pvcName = disk?.status?.target?.persistentVolumeClaimName;
  if (pvcName === undefined || pvcName === '') return;
  const pvc = await ctx.lookups.persistentVolumeClaim(namespace, pvcName);
  if (pvc === undefined || pvc.accessModes.includes('ReadWriteMany') || !pvc.accessModes.includes('ReadWriteOnce')) return;
  out.deny('spec.type', `VirtualDisk ${name} is on a ReadWriteOnce volume; migrating such VMs is not available in the CE edition`);
}

export const vmopValidator: Validator<Vmop> = {
  group: GROUP,
  kind: 'VirtualMachineOperation',
  parse: schemaParser(VirtualMachineOperationSchema),
  checks: [nodeSelector, oneActive, ceLocalDisks],
};
