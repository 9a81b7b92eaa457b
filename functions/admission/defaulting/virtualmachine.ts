/**
 * Defaulting of a VirtualMachine: the default class when none is named, the core fraction from the
 * class sizing policy, and network ids (Main 1, others from 2). It runs before the apiserver checks
 * the schema, so it reads the raw object defensively and changes a copy; patch.ts computes the patch.
 */
import { DEFAULT_CLASS_ANNOTATION } from '../../../shared/api/resources/virtualmachineclass.js';
import { Findings } from '../decision.js';
import { defaultCoreFraction, policyFor } from '../lib/sizing.js';
import type { RuleContext } from '../lookups.js';

type Json = Record<string, unknown>;

export interface Defaulted {
  readonly changed: Json;
  readonly findings: Findings;
}

function record(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

export async function defaultVirtualMachine(raw: Json, ctx: RuleContext): Promise<Defaulted> {
  const changed = structuredClone(raw);
  const findings = new Findings();
  const spec = record(changed['spec']);
  if (spec === undefined) return { changed, findings };
  await defaultClass(spec, ctx, findings);
  await defaultFraction(spec, ctx, findings);
  defaultNetworkIds(spec);
  return { changed, findings };
}

async function defaultClass(spec: Json, ctx: RuleContext, out: Findings): Promise<void> {
  if (text(spec['virtualMachineClassName']) !== '') return;
  const classes = await ctx.lookups.virtualMachineClasses();
  const defaults = classes.filter((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true' && c.metadata.deletionTimestamp === undefined);
  const [only] = defaults;
  if (defaults.length === 1 && only !== undefined) {
    spec['virtualMachineClassName'] = only.metadata.name;
  } else if (defaults.length === 0) {
    out.deny('spec.virtualMachineClassName', `is empty and no VirtualMachineClass is annotated ${DEFAULT_CLASS_ANNOTATION}=true; name a class`);
  } else {
    const names = defaults.map((c) => c.metadata.name ?? '').join(', ');
    out.deny('spec.virtualMachineClassName', `is empty and several VirtualMachineClasses are marked default (${names}); name a class`);
  }
}

async function defaultFraction(spec: Json, ctx: RuleContext, out: Findings): Promise<void> {
  const cpu = record(spec['cpu']);
  const className = text(spec['virtualMachineClassName']);
  if (cpu === undefined || text(cpu['coreFraction']) !== '' || className === '') return;
  const cores = typeof cpu['cores'] === 'number' ? cpu['cores'] : 1;
  const cls = await ctx.lookups.virtualMachineClass(className);
  const fraction = defaultCoreFraction(cls === undefined ? undefined : policyFor(cls, cores));
  if (fraction.ok) cpu['coreFraction'] = fraction.value;
  else out.deny('spec.cpu.coreFraction', `is empty and cannot be defaulted: ${fraction.message}`);
}

function defaultNetworkIds(spec: Json): void {
  const networks = Array.isArray(spec['networks']) ? spec['networks'].map(record) : [];
  const used = new Set(networks.map((n) => n?.['id']).filter((id): id is number => typeof id === 'number'));
  let next = 2;
  for (const n of networks) {
    if (n === undefined || n['id'] !== undefined) continue;
    if (n['type'] === 'Main') {
      n['id'] = 1;
      continue;
    }
    while (used.has(next)) next += 1;
    n['id'] = next;
    used.add(next);
  }
}
