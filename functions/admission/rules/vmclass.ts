/**
 * VirtualMachineClass validation (v1alpha2, and v1alpha3 converted to v1alpha2 first): one default
 * class, non-overlapping sizing policies, and a default core fraction the policy allows.
 */
import { GROUP } from '../../../shared/api/resources/common.js';
import { DEFAULT_CLASS_ANNOTATION, VirtualMachineClassSchema, type VirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass.js';
import { fractionsBelowFull } from '../lib/sizing.js';
import { pure, type Check } from './check.js';
import { schemaParser, type Validator } from './validator.js';
import { autoFractionProblems } from './virtualmachine/cpu.js';
import { fromV1alpha3 } from './vmclass-convert.js';

const isDefault = (c: VirtualMachineClass): boolean => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true';

const oneDefault: Check<VirtualMachineClass> = {
  name: 'at most one class is the default',
  run: async ({ object }, { lookups }, out) => {
    if (!isDefault(object)) return;
    const others = (await lookups.virtualMachineClasses()).filter((c) => c.metadata.name !== object.metadata.name && isDefault(c));
    if (others.length === 0) return;
    const names = others.map((c) => c.metadata.name ?? '').join(', ');
    out.deny(`metadata.annotations[${DEFAULT_CLASS_ANNOTATION}]`, `VirtualMachineClass ${names} is already the default class`);
  },
};

const policiesDisjoint: Check<VirtualMachineClass> = pure('sizing policy core ranges do not overlap', ({ object }, out) => {
  const policies = object.spec.sizingPolicies ?? [];
  policies.forEach((p, j) => {
    const i = policies.findIndex((q, k) => k < j && q.cores.min <= p.cores.max && p.cores.min <= q.cores.max);
    const q = policies[i];
    if (q === undefined) return;
    out.deny(
      `spec.sizingPolicies[${j}].cores`,
      `cpu crosses: ${p.cores.min}-${p.cores.max} overlaps spec.sizingPolicies[${i}] (${q.cores.min}-${q.cores.max})`,
    );
  });
});

const defaultFractions: Check<VirtualMachineClass> = {
  name: 'default core fractions are allowed by their policy',
  run: async ({ object }, ctx, out) => {
    const policies = object.spec.sizingPolicies ?? [];
    let autoChecked = false;
    for (const [i, p] of policies.entries()) {
      const path = `spec.sizingPolicies[${i}].defaultCoreFraction`;
      const d = p.defaultCoreFraction;
      const allowed = p.coreFractions ?? [];
      if (typeof d === 'number' && allowed.length > 0 && !allowed.includes(d)) {
        out.deny(path, `${d} is not one of the policy's coreFractions (${allowed.join(', ')})`);
      }
      if (d !== 'Auto') continue;
      if (fractionsBelowFull(p).length < 2) out.deny(path, 'Auto needs at least two coreFractions below 100');
      if (!autoChecked) await autoFractionProblems(ctx, out, path);
      autoChecked = true;
    }
  },
};

const checks = [oneDefault, policiesDisjoint, defaultFractions];

export const vmClassValidator: Validator<VirtualMachineClass> = {
  group: GROUP,
  kind: 'VirtualMachineClass',
  versions: ['v1alpha2'],
  parse: schemaParser(VirtualMachineClassSchema),
  checks,
};

const parseV1alpha2 = schemaParser(VirtualMachineClassSchema);

export const vmClassV1alpha3Validator: Validator<VirtualMachineClass> = {
  group: GROUP,
  kind: 'VirtualMachineClass',
  versions: ['v1alpha3'],
  parse: (raw) => {
    const converted = fromV1alpha3(raw);
    return converted.ok ? parseV1alpha2(converted.value) : converted;
  },
  checks,
};
