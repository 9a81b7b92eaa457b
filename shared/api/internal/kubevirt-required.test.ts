/** What our internal objects need from KubeVirt's configuration: found missing, put back, nothing else touched; the install ships it all. */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { load as parseYaml } from 'js-yaml';
import {
  kubeVirtRepairPatch,
  missingKubeVirtParts,
  onlyControllerFlagsMissing,
  REQUIRED_CONTROLLER_FLAGS,
  REQUIRED_EMULATED_MACHINES,
  REQUIRED_FEATURE_GATES,
} from './kubevirt-required.js';
import type { InternalKubeVirt } from './resources.js';

const installed = parseYaml(readFileSync(new URL('../../../knative/kubevirt/config/kubevirt-config.yaml', import.meta.url), 'utf8')) as InternalKubeVirt;
/** A configuration object with these parts and the controller flags the install ships. */
const withConfiguration = (configuration: Record<string, unknown>): Pick<InternalKubeVirt, 'spec'> => ({
  spec: { configuration, customizeComponents: { flags: { controller: { ...REQUIRED_CONTROLLER_FLAGS } } } },
});

describe('KubeVirt configuration parts our internal objects need', () => {
  it('are all in the install’s configuration object (no drift between the list and the manifest)', () => {
    expect(missingKubeVirtParts(installed)).toEqual([]);
    expect(kubeVirtRepairPatch(installed)).toBeUndefined();
  });

  it('finds the bpfbridge binding missing and puts back only it', () => {
    const kv = structuredClone(installed);
    delete (kv.spec.configuration as { network: { binding: Record<string, unknown> } }).network.binding['bpfbridge'];
    expect(missingKubeVirtParts(kv)).toEqual(['network binding bpfbridge (tap attachment, with migration)']);
    expect(kubeVirtRepairPatch(kv)).toEqual({
      spec: { configuration: { network: { binding: { bpfbridge: { domainAttachmentType: 'tap', migration: {} } } } } },
    });
  });

  it('corrects a binding with another attachment, keeping its other fields', () => {
    const kv = withConfiguration({
      network: { binding: { bpfbridge: { domainAttachmentType: 'managedTap', downwardAPI: 'device-info' } } },
      architectureConfiguration: { amd64: { emulatedMachines: [...REQUIRED_EMULATED_MACHINES] } },
      developerConfiguration: { featureGates: [...REQUIRED_FEATURE_GATES] },
    });
    expect(kubeVirtRepairPatch(kv)).toEqual({
      spec: { configuration: { network: { binding: { bpfbridge: { domainAttachmentType: 'tap', downwardAPI: 'device-info', migration: {} } } } } },
    });
  });

  it('adds missing machine types and feature gates after the administrator’s own, keeping them', () => {
    const kv = withConfiguration({
      network: { binding: { bpfbridge: { domainAttachmentType: 'tap', migration: {} } } },
      architectureConfiguration: { amd64: { emulatedMachines: ['virt*', 'q35*'] } },
      developerConfiguration: { featureGates: ['Sidecar', 'Snapshot'] },
    });
    expect(missingKubeVirtParts(kv)).toEqual([
      'emulated machines pc-q35*, pc, pc-i440fx*',
      'feature gates HotplugVolumes, ExpandDisks, VMLiveUpdateFeatures, CPUManager, VolumeSnapshotDataSource',
    ]);
    expect(kubeVirtRepairPatch(kv)).toEqual({
      spec: {
        configuration: {
          architectureConfiguration: { amd64: { emulatedMachines: ['virt*', 'q35*', 'pc-q35*', 'pc', 'pc-i440fx*'] } },
          developerConfiguration: {
            featureGates: ['Sidecar', 'Snapshot', 'HotplugVolumes', 'ExpandDisks', 'VMLiveUpdateFeatures', 'CPUManager', 'VolumeSnapshotDataSource'],
          },
        },
      },
    });
  });

  it('finds the evacuation flag of virt-controller missing and puts back only it, keeping the other flags', () => {
    const kv = structuredClone(installed) as InternalKubeVirt & { spec: { customizeComponents: { flags: { controller: Record<string, string> } } } };
    delete kv.spec.customizeComponents.flags.controller['evacuation-controller-threads'];
    expect(missingKubeVirtParts(kv)).toEqual(["virt-controller flag evacuation-controller-threads: '0' (KubeVirt's own evacuation off)"]);
    expect(onlyControllerFlagsMissing(missingKubeVirtParts(kv))).toBe(true);
    expect(kubeVirtRepairPatch(kv)).toEqual({ spec: { customizeComponents: { flags: { controller: { 'evacuation-controller-threads': '0' } } } } });
  });

  it.each([['2'], ['']])('corrects the evacuation flag set to %p', (value) => {
    const kv = structuredClone(installed) as InternalKubeVirt & { spec: { customizeComponents: { flags: { controller: Record<string, string> } } } };
    kv.spec.customizeComponents.flags.controller['evacuation-controller-threads'] = value;
    expect(kubeVirtRepairPatch(kv)).toEqual({ spec: { customizeComponents: { flags: { controller: { 'evacuation-controller-threads': '0' } } } } });
  });

  it.each<[string, Pick<InternalKubeVirt, 'spec'>]>([
    ['no configuration at all', { spec: {} }],
    [
      'fields of the wrong type',
      {
        spec: {
          configuration: { network: 'x', architectureConfiguration: { amd64: { emulatedMachines: 'q35*' } }, developerConfiguration: { featureGates: [1, 2] } },
          customizeComponents: { flags: 'x' },
        },
      } as unknown as Pick<InternalKubeVirt, 'spec'>,
    ],
  ])('with %s: lists every part and puts them all back', (_what, kv) => {
    expect(missingKubeVirtParts(kv)).toHaveLength(4);
    const patched = kubeVirtRepairPatch(kv);
    expect(missingKubeVirtParts(patched as Pick<InternalKubeVirt, 'spec'>)).toEqual([]);
  });
});
