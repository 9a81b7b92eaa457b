import { describe, expect, it } from '@jest/globals';
import type { z } from 'zod';
import type { VirtualMachine } from './resources/virtualmachine.js';
import { VirtualMachineSpecSchema } from './resources/virtualmachine-spec.js';
import { ALL_RESOURCES, resourceByKind } from './registry.js';
import { structuralSchema, type JsonSchema } from './k8s/structural.js';
import { uncovered } from './testdata/coverage.js';
import { FULL_OBJECTS } from './testdata/full.js';
import { check } from './validate.js';

describe('the full objects of the round-trip test', () => {
  it.each(FULL_OBJECTS.map((o, i) => [`${o.kind} #${i}`, o] as const))('%s parses unchanged', (_name, obj) => {
    const result = check(resourceByKind(obj.kind).schema, obj);
    expect(result).toEqual({ ok: true, value: obj });
  });

  it.each(ALL_RESOURCES.map((d) => [d.kind, d] as const))('together set every field of %s', (kind, def) => {
    const schema = structuralSchema(def.schema);
    const props = schema['properties'] as Record<string, JsonSchema>;
    const parts: JsonSchema = { properties: Object.fromEntries(['spec', 'status'].filter((p) => props[p]).map((p) => [p, props[p]])) };
    expect(
      uncovered(
        parts,
        FULL_OBJECTS.filter((o) => o.kind === kind),
      ),
    ).toEqual([]);
  });
});

describe('the inferred types', () => {
  it('carry enums, required fields and defaults (checked by tsc)', () => {
    const runPolicy: VirtualMachine['spec']['runPolicy'] = 'AlwaysOn';
    // @ts-expect-error not a run policy
    const wrong: VirtualMachine['spec']['runPolicy'] = 'Sometimes';
    const input = {
      virtualMachineClassName: 'generic',
      cpu: { cores: 1 },
      memory: { size: '1Gi' },
      blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'root' }],
    } satisfies z.input<typeof VirtualMachineSpecSchema>;
    // After parsing, defaulted fields are always present.
    const osType: VirtualMachine['spec']['osType'] = VirtualMachineSpecSchema.parse(input).osType;
    expect([runPolicy, wrong, osType]).toEqual(['AlwaysOn', 'Sometimes', 'Generic']);
  });
});
