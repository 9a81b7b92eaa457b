/**
 * knative/kubevirt/crds: upstream KubeVirt's 17 CRDs renamed by the api-rewriter's rules, committed,
 * checked here for drift against what the dumper prints now; served by the test apiserver (the
 * global set-up applies them) with their full upstream schemas.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { INTERNAL_RESOURCES } from '../../../shared/api/registry.js';
import { ensureKubeVirtBinaries } from '../../env/binaries.js';
import { ADDITIONS, addFields, KUBEVIRT_CRD_DIR, KUBEVIRT_CRD_HEADER, renameCrd, renderKubeVirtCrdFiles, upstreamCrds } from '../../env/kubevirt/crds.js';
import { freshNamespace, kubectl } from '../../env/index.js';

let binDir: string;
beforeAll(async () => {
  binDir = await ensureKubeVirtBinaries();
});

describe("KubeVirt's CRDs in the install", () => {
  it('are exactly what tests/env/kubevirt/generate-crds.ts renders from upstream (run it after changing the version or the rules)', () => {
    const rendered = renderKubeVirtCrdFiles(binDir);
    expect(readdirSync(KUBEVIRT_CRD_DIR).sort()).toEqual([...rendered.keys()].sort());
    for (const [name, text] of rendered) expect({ name, text: readFileSync(join(KUBEVIRT_CRD_DIR, name), 'utf8') }).toEqual({ name, text });
  });

  it("are upstream's 17, every one moved into an internal group with InternalVirtualization kinds", () => {
    const upstream = upstreamCrds(binDir);
    expect(upstream).toHaveLength(17);
    for (const crd of upstream.map(renameCrd)) {
      const spec = crd['spec'] as { group: string; names: { kind: string; plural: string; categories?: string[] } };
      expect(spec.group).toMatch(/(^|\.)internal\.virtualization\.deckhouse\.io$/);
      expect(spec.names.kind).toMatch(/^InternalVirtualization/);
      expect(spec.names.plural).toMatch(/^internalvirtualization/);
      if (spec.names.categories !== undefined) expect(spec.names.categories).toEqual(['intvirt']);
      expect(readFileSync(join(KUBEVIRT_CRD_DIR, `${spec.names.plural}.${spec.group}.yaml`), 'utf8').startsWith(`# ${KUBEVIRT_CRD_HEADER}\n`)).toBe(true);
    }
  });

  it('cover every KubeVirt kind our code types (shared/api/internal), under the same names', () => {
    const names = new Set(readdirSync(KUBEVIRT_CRD_DIR).map((f) => f.replace(/\.yaml$/, '')));
    const ours = INTERNAL_RESOURCES.filter((d) => d.group === 'internal.virtualization.deckhouse.io').map((d) => `${d.plural}.${d.group}`);
    expect(ours).toHaveLength(4);
    for (const name of ours) expect(names.has(name)).toBe(true);
  });

  it('refuse to render a CRD of a group the rewriter does not rename, naming it', () => {
    const foreign = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com' },
    };
    expect(() => renameCrd(foreign)).toThrow(/do not rename the CRD widgets\.example\.com/);
  });

  it('are served by the apiserver, established and structural, with the upstream schema (not an open one)', async () => {
    const names = readdirSync(KUBEVIRT_CRD_DIR)
      .filter((f) => f !== 'kustomization.yaml')
      .map((f) => f.replace(/\.yaml$/, ''));
    const res = await kubectl(['get', 'crd', ...names, '-o', 'json']);
    expect(res.stderr).toBe('');
    const items = (
      JSON.parse(res.stdout) as {
        items: {
          metadata: { name: string };
          spec: { versions: { schema: { openAPIV3Schema: unknown } }[] };
          status: { conditions: { type: string; status: string }[] };
        }[];
      }
    ).items;
    expect(items).toHaveLength(17);
    for (const crd of items) {
      const conditions = Object.fromEntries(crd.status.conditions.map((c) => [c.type, c.status]));
      expect({ name: crd.metadata.name, ...conditions }).toMatchObject({ name: crd.metadata.name, Established: 'True', NamesAccepted: 'True' });
      expect(conditions['NonStructuralSchema']).toBeUndefined();
    }
    const explain = await kubectl(['explain', 'internalvirtualizationvirtualmachines.spec.template.spec.domain.devices.interfaces.binding']);
    expect(explain.stdout).toContain('Binding specifies the binding plugin');
  });

  it('keep the fields our code needs that upstream lacks (ADDITIONS): strict validation accepts them and the apiserver stores them', async () => {
    const ns = await freshNamespace('kv-crds');
    const vmi = {
      apiVersion: 'internal.virtualization.deckhouse.io/v1',
      kind: 'InternalVirtualizationVirtualMachineInstance',
      metadata: { name: 'usb', namespace: ns },
      spec: { domain: { devices: {} } },
      status: {
        deviceStatus: {
          hostDeviceStatuses: [{ name: 'flash', phase: 'Ready', address: '0:1', reason: 'Attached', message: 'in the guest' }],
        },
      },
    };
    const res = await kubectl(['create', '-f', '-', '-o', 'json'], { stdin: JSON.stringify(vmi) });
    expect(res.stderr).toBe('');
    const stored = JSON.parse(res.stdout) as { status: { deviceStatus: Record<string, unknown> } };
    expect(stored.status.deviceStatus).toEqual({ hostDeviceStatuses: vmi.status.deviceStatus.hostDeviceStatuses });
  });

  it('refuse an addition whose place upstream moved, or whose field upstream now has, naming it', () => {
    const vmiCrd = upstreamCrds(binDir).find((c) => (c['metadata'] as { name: string }).name === 'virtualmachineinstances.kubevirt.io');
    expect(vmiCrd).toBeDefined();
    const [addition] = ADDITIONS;
    if (vmiCrd === undefined || addition === undefined) return;
    expect(() => addFields(structuredClone(vmiCrd), [{ ...addition, at: ['status', 'noSuchField'] }])).toThrow(
      'schema addition to virtualmachineinstances.kubevirt.io: no object at status.noSuchField',
    );
    expect(() => addFields(structuredClone(vmiCrd), [{ ...addition, properties: { name: { type: 'string' } } }])).toThrow(
      'status.deviceStatus.hostDeviceStatuses.name exists upstream now',
    );
  });
});
