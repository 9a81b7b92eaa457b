import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { CRD_DIR, GENERATED_HEADER, renderCrdFiles } from './crds.js';
import { openAPIV3Schema } from './k8s/crd.js';
import { quantity, withRules } from './k8s/schema.js';
import { structuralSchema, type JsonSchema } from './k8s/structural.js';
import { ALL_RESOURCES, PUBLIC_RESOURCES } from './registry.js';

describe('the committed CRDs in knative/crds', () => {
  it('are exactly what shared/api/generate.ts renders (run it after changing a schema)', () => {
    const rendered = renderCrdFiles();
    const onDisk = readdirSync(CRD_DIR).filter((f) => readFileSync(join(CRD_DIR, f), 'utf8').includes(GENERATED_HEADER));
    expect(onDisk.sort()).toEqual([...rendered.keys()].sort());
    for (const [name, text] of rendered) expect({ name, text: readFileSync(join(CRD_DIR, name), 'utf8') }).toEqual({ name, text });
  });

  it('start with the do-not-edit header', () => {
    for (const text of renderCrdFiles().values()) expect(text.startsWith(`# ${GENERATED_HEADER}\n`)).toBe(true);
  });
});

/** Names, scope, short names and categories as the original module defines them. */
const NAMES: Record<string, [string, 'Namespaced' | 'Cluster', string[], string[]]> = {
  VirtualMachine: ['virtualmachines', 'Namespaced', ['vm'], ['virtualization', 'all']],
  VirtualDisk: ['virtualdisks', 'Namespaced', ['vd'], ['virtualization']],
  VirtualImage: ['virtualimages', 'Namespaced', ['vi'], ['virtualization']],
  ClusterVirtualImage: ['clustervirtualimages', 'Cluster', ['cvi'], ['virtualization-cluster']],
  VirtualMachineClass: ['virtualmachineclasses', 'Cluster', ['vmc', 'vmclass'], ['virtualization-cluster']],
  VirtualMachineBlockDeviceAttachment: ['virtualmachineblockdeviceattachments', 'Namespaced', ['vmbda'], ['virtualization']],
  VirtualMachineIPAddress: ['virtualmachineipaddresses', 'Namespaced', ['vmip'], ['virtualization']],
  VirtualMachineIPAddressLease: ['virtualmachineipaddressleases', 'Cluster', ['vmipl', 'vmiplease'], ['virtualization-cluster']],
  VirtualMachineMACAddress: ['virtualmachinemacaddresses', 'Namespaced', ['vmmac'], ['virtualization']],
  VirtualMachineMACAddressLease: ['virtualmachinemacaddressleases', 'Cluster', ['vmmacl', 'vmmaclease'], ['virtualization-cluster']],
  VirtualMachineOperation: ['virtualmachineoperations', 'Namespaced', ['vmop'], ['virtualization']],
  VirtualMachinePool: ['virtualmachinepools', 'Namespaced', ['vmpool', 'vmpools'], ['virtualization']],
  USBDevice: ['usbdevices', 'Namespaced', ['usb'], ['virtualization']],
  NodeUSBDevice: ['nodeusbdevices', 'Cluster', ['nusb'], ['virtualization']],
  VirtualDiskSnapshot: ['virtualdisksnapshots', 'Namespaced', ['vdsnapshot', 'vds'], ['virtualization']],
  VirtualMachineSnapshot: ['virtualmachinesnapshots', 'Namespaced', ['vmsnapshot', 'vms'], ['virtualization']],
  VirtualMachineSnapshotOperation: ['virtualmachinesnapshotoperations', 'Namespaced', ['vmsop'], ['virtualization']],
};

describe('the resource definitions', () => {
  it.each(PUBLIC_RESOURCES.map((d) => [d.kind, d] as const))('%s has the original names and scope', (kind, def) => {
    expect([def.plural, def.scope, def.shortNames, def.categories]).toEqual(NAMES[kind]);
    expect(`${def.group}/${def.version}`).toBe('virtualization.deckhouse.io/v1alpha2');
    expect(def.statusSubresource).toBe(true);
  });

  it('give only the pool a scale subresource', () => {
    expect(ALL_RESOURCES.filter((d) => d.scale).map((d) => d.kind)).toEqual(['VirtualMachinePool']);
  });

  it.each(ALL_RESOURCES.map((d) => [d.kind, d] as const))('%s has a schema with a description at every field', (_k, def) => {
    const missing: string[] = [];
    const walk = (node: JsonSchema, path: string): void => {
      for (const [key, child] of Object.entries((node['properties'] ?? {}) as Record<string, JsonSchema>)) {
        if (child['description'] === undefined && path !== '') missing.push(`${path}.${key}`);
        walk(child, `${path}.${key}`);
      }
      if (node['items'] !== undefined) walk(node['items'] as JsonSchema, `${path}[]`);
    };
    const root = openAPIV3Schema(def);
    for (const part of ['spec', 'status']) {
      const sub = (root['properties'] as Record<string, JsonSchema>)[part];
      if (sub !== undefined) walk(sub, part);
    }
    expect(missing).toEqual([]);
  });
});

describe('the structural schema conversion', () => {
  it('renders a quantity as int-or-string with the quantity pattern, keeping its CEL rules', () => {
    const schema = withRules(quantity(), [{ rule: 'true', message: 'm', holds: () => true }]).describe('size');
    const out = structuralSchema(schema);
    expect(out).toMatchObject({
      description: 'size',
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
      'x-kubernetes-validations': [{ rule: 'true', message: 'm' }],
    });
    expect(out['type']).toBeUndefined();
  });

  it('drops additionalProperties false and keeps unknown fields of loose objects', () => {
    expect(structuralSchema(z.strictObject({ a: z.string() }))).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
    expect(structuralSchema(z.looseObject({ a: z.string() }))).toMatchObject({ 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('refuses unions and untyped fields, which a structural schema cannot express', () => {
    expect(() => structuralSchema(z.strictObject({ u: z.union([z.string(), z.boolean()]) }))).toThrow(/\.u: unions/);
    expect(() => structuralSchema(z.strictObject({ a: z.any() }))).toThrow(/\.a: every node/);
  });

  it('places every CEL fieldPath on a field of the schema', () => {
    const bad: string[] = [];
    const walk = (node: JsonSchema, path: string): void => {
      for (const v of (node['x-kubernetes-validations'] ?? []) as { fieldPath?: string }[]) {
        let target: JsonSchema | undefined = node;
        for (const seg of v.fieldPath?.slice(1).split('.') ?? []) {
          target = (target?.['properties'] as Record<string, JsonSchema> | undefined)?.[seg];
        }
        if (target === undefined) bad.push(`${path} ${v.fieldPath ?? ''}`);
      }
      for (const [k, child] of Object.entries((node['properties'] ?? {}) as Record<string, JsonSchema>)) walk(child, `${path}.${k}`);
      if (node['items'] !== undefined) walk(node['items'] as JsonSchema, `${path}[]`);
    };
    for (const def of PUBLIC_RESOURCES) walk(openAPIV3Schema(def), def.kind);
    expect(bad).toEqual([]);
  });
});
