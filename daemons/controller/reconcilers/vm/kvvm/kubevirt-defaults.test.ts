import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine } from '../../../../../shared/api/internal/resources.js';
import { deepEqual } from '../../../engine/merge-diff.js';
import { withKubeVirtDefaults } from './kubevirt-defaults.js';

const kvvm = (spec: Record<string, unknown>, domain: Record<string, unknown>): InternalVirtualMachine =>
  ({
    metadata: { name: 'vm' },
    spec: { runStrategy: 'Always', template: { spec: { ...spec, domain: { cpu: { cores: 1 }, ...domain } } } },
  }) as InternalVirtualMachine;

// What virt-api's mutator stored: our template plus architecture, a firmware UUID, (here) a machine type
// and the template's null creationTimestamp.
const stored = kvvm({ architecture: 'amd64' }, { machine: { type: 'q35' }, firmware: { uuid: '1b5e-uuid', serial: 's' } });
stored.spec.template.metadata = { creationTimestamp: null };

describe('fields virt-api defaults on the internal VM', () => {
  it('carries architecture, machine type and firmware UUID over, so the stored VM reads as unchanged', () => {
    const built = kvvm({}, { firmware: { serial: 's' } });
    expect(deepEqual(withKubeVirtDefaults(built, stored).spec.template, stored.spec.template)).toBe(true);
  });

  it('keeps what we set ourselves and a real change still shows', () => {
    const built = kvvm({ architecture: 'arm64' }, { machine: { type: 'pc-i440fx' }, cpu: { cores: 2 } });
    const out = withKubeVirtDefaults(built, stored).spec.template.spec;
    expect(out['architecture']).toBe('arm64');
    expect(out.domain.machine?.type).toBe('pc-i440fx');
    expect(out.domain.firmware?.['uuid']).toBe('1b5e-uuid');
    expect(deepEqual(out, stored.spec.template.spec)).toBe(false);
  });

  it('adds nothing before the internal VM exists, or when the stored one has no defaults', () => {
    const built = kvvm({}, {});
    expect(withKubeVirtDefaults(built, undefined)).toBe(built);
    expect(withKubeVirtDefaults(built, kvvm({}, {})).spec.template).toEqual(built.spec.template);
  });
});
