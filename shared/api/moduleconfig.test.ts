import { describe, expect, it } from '@jest/globals';
import { isAlignedCIDR } from './ipv4.js';
import { VirtualizationModuleConfigSchema, VirtualizationSettingsSchema } from './moduleconfig.js';
import { check } from './validate.js';

const dvcr = { storage: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { size: '50Gi' } } };

describe('the virtualization ModuleConfig settings', () => {
  it('accept CIDRs and a custom certificate, filling the documented defaults', () => {
    const result = check(VirtualizationSettingsSchema, {
      virtualMachineCIDRs: ['10.66.10.0/24', '10.77.20.0/24'],
      https: { mode: 'CustomCertificate', customCertificate: { secretName: 'upload-tls' } },
      dvcr: { ...dvcr, gc: {} },
      audit: {},
      logLevel: 'debug',
      featureGates: ['HotplugCPUWithLiveMigration'],
    });
    expect(result).toMatchObject({
      ok: true,
      value: { dvcr: { gc: { schedule: '0 2 * * *' } }, audit: { enabled: false }, https: { mode: 'CustomCertificate' } },
    });
  });

  it('default the https mode to CertManager with an empty custom certificate', () => {
    expect(check(VirtualizationSettingsSchema, { dvcr, https: {} })).toMatchObject({
      ok: true,
      value: { https: { mode: 'CertManager', customCertificate: {} } },
    });
  });

  it.each([
    ['an unknown key', { dvcr, unknownKey: true }, 'unknownKey'],
    ['no dvcr', {}, 'dvcr'],
    ['dvcr storage without a PVC', { dvcr: { storage: { type: 'PersistentVolumeClaim' } } }, 'dvcr.storage.persistentVolumeClaim'],
    ['a CIDR not aligned to its mask', { dvcr, virtualMachineCIDRs: ['10.66.10.1/24'] }, 'virtualMachineCIDRs[0]'],
    ['an empty CIDR list', { dvcr, virtualMachineCIDRs: [] }, 'virtualMachineCIDRs'],
    ['an unknown log level', { dvcr, logLevel: 'trace' }, 'logLevel'],
    ['an unknown feature gate', { dvcr, featureGates: ['Teleport'] }, 'featureGates[0]'],
    [
      'an empty allowed storage class list',
      { dvcr, virtualDisks: { allowedStorageClassSelector: { matchNames: [] } } },
      'virtualDisks.allowedStorageClassSelector.matchNames',
    ],
    [
      'a system network without a name',
      { dvcr, liveMigration: { network: { type: 'SystemNetwork', systemNetwork: {} } } },
      'liveMigration.network.systemNetwork.name',
    ],
    ['a DVCR garbage collection schedule that is not cron', { dvcr: { ...dvcr, gc: { schedule: '0 25 * * *' } } }, 'dvcr.gc.schedule'],
    ['a system network type without the network', { dvcr, liveMigration: { network: { type: 'SystemNetwork' } } }, 'liveMigration.network.systemNetwork'],
  ])('reject %s, naming the field', (_what, settings, field) => {
    const result = check(VirtualizationSettingsSchema, settings);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => p.path)).toContain(field);
  });

  it('accept a live migration network that is empty or a named SystemNetwork', () => {
    for (const network of [{}, { type: 'SystemNetwork', systemNetwork: { name: 'migration' } }])
      expect(check(VirtualizationSettingsSchema, { dvcr, liveMigration: { network } }).ok).toBe(true);
  });

  it('type the whole ModuleConfig object named virtualization', () => {
    const mc = {
      apiVersion: 'deckhouse.io/v1alpha1',
      kind: 'ModuleConfig',
      metadata: { name: 'virtualization' },
      spec: { enabled: true, version: 1, settings: { dvcr } },
    };
    expect(check(VirtualizationModuleConfigSchema, mc).ok).toBe(true);
    expect(check(VirtualizationModuleConfigSchema, { ...mc, metadata: { name: 'other' } }).ok).toBe(false);
  });
});

describe('CIDR alignment', () => {
  it.each([
    ['10.0.0.0/8', true],
    ['10.66.10.0/24', true],
    ['192.168.1.128/25', true],
    ['0.0.0.0/0', true],
    ['10.66.10.1/24', false],
    ['192.168.1.64/25', false],
    ['10.0.0.0/33', false],
    ['256.0.0.0/8', false],
    ['10.0.0.0', false],
  ])('%s is aligned: %s', (cidr, aligned) => {
    expect(isAlignedCIDR(cidr)).toBe(aligned);
  });
});
