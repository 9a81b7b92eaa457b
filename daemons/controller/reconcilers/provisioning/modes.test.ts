import { describe, expect, it } from '@jest/globals';
import type { StorageProfile } from '../../../../shared/api/resources/storageprofile.js';
import { profileStatus } from '../storageprofile/profile.js';
import { ACCESS_MODE_ANNOTATION, VOLUME_MODE_ANNOTATION, preferredModes, resolveClaimModes } from './modes.js';
import type { StorageClass } from './kube.js';

const cls = (provisioner: string, annotations?: Record<string, string>): StorageClass => ({ metadata: { name: 'fast', annotations }, provisioner });
const profileOf = (c: StorageClass, spec: StorageProfile['spec'] = {}): StorageProfile => ({
  apiVersion: 'storage.virtualization.deckhouse.io/v1alpha1',
  kind: 'StorageProfile',
  metadata: { name: c.metadata.name ?? '' },
  spec,
  status: profileStatus(c, spec),
});
const disk = (annotations?: Record<string, string>) => ({ kind: 'VirtualDisk', metadata: { name: 'root', annotations } });

describe('the modes of a new claim', () => {
  it.each([
    ['replicated.csi.storage.deckhouse.io', { accessMode: 'ReadWriteMany', volumeMode: 'Block' }],
    ['nfs.csi.k8s.io', { accessMode: 'ReadWriteMany', volumeMode: 'Filesystem' }],
    ['local.csi.storage.deckhouse.io', { accessMode: 'ReadWriteOnce', volumeMode: 'Block' }],
    ['kubernetes.io/no-provisioner', { accessMode: 'ReadWriteOnce', volumeMode: 'Filesystem' }],
    ['unknown.example.com', { accessMode: 'ReadWriteOnce', volumeMode: 'Block' }],
  ])('come from the profile of a %s class: the widest access mode, then Block', (provisioner, want) => {
    const c = cls(provisioner);
    expect(resolveClaimModes(disk(), c, profileOf(c))).toEqual({ ok: true, modes: want });
  });

  it('follow a profile a user edited', () => {
    const c = cls('replicated.csi.storage.deckhouse.io');
    const edited = profileOf(c, { claimPropertySets: [{ accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' }] });
    expect(resolveClaimModes(disk(), c, edited)).toEqual({ ok: true, modes: { accessMode: 'ReadWriteOnce', volumeMode: 'Filesystem' } });
  });

  it('take the object annotations first, then the class annotations, without a profile when both are set', () => {
    const c = cls('replicated.csi.storage.deckhouse.io', { [ACCESS_MODE_ANNOTATION]: 'ReadWriteMany', [VOLUME_MODE_ANNOTATION]: 'Block' });
    expect(resolveClaimModes(disk({ [VOLUME_MODE_ANNOTATION]: 'Filesystem' }), c, undefined)).toEqual({
      ok: true,
      modes: { accessMode: 'ReadWriteMany', volumeMode: 'Filesystem' },
    });
  });

  it('ignore annotation values that are not modes', () => {
    const c = cls('nfs.csi.k8s.io');
    expect(resolveClaimModes(disk({ [VOLUME_MODE_ANNOTATION]: 'Tape', [ACCESS_MODE_ANNOTATION]: 'Sometimes' }), c, profileOf(c))).toEqual({
      ok: true,
      modes: { accessMode: 'ReadWriteMany', volumeMode: 'Filesystem' },
    });
  });

  it('wait for the profile when the annotations do not settle both', () => {
    expect(resolveClaimModes(disk(), cls('nfs.csi.k8s.io'), undefined)).toEqual({
      ok: false,
      problem: 'profileNotFound',
      message: 'storage profile fast not found',
    });
  });

  it('refuse a profile edited to a volume mode the class cannot give, naming the profile and the mode', () => {
    const c = cls('nfs.csi.k8s.io');
    const edited = profileOf(c, { claimPropertySets: [{ accessModes: ['ReadWriteMany'], volumeMode: 'Block' }] });
    expect(resolveClaimModes(disk(), c, edited)).toEqual({
      ok: false,
      problem: 'unsupportedMode',
      message: 'StorageProfile fast sets volume mode Block, which StorageClass fast (provisioner nfs.csi.k8s.io) cannot give: it gives Filesystem',
    });
  });

  it('refuse an access mode the class cannot give', () => {
    const c = cls('local.csi.storage.deckhouse.io');
    const edited = profileOf(c, { claimPropertySets: [{ accessModes: ['ReadWriteMany'], volumeMode: 'Block' }] });
    expect(resolveClaimModes(disk(), c, edited)).toMatchObject({ ok: false, message: expect.stringContaining('access mode ReadWriteMany') });
  });

  it('trust any mode on a provisioner nobody knows', () => {
    const c = cls('unknown.example.com');
    const edited = profileOf(c, { claimPropertySets: [{ accessModes: ['ReadWriteMany'], volumeMode: 'Block' }] });
    expect(resolveClaimModes(disk(), c, edited)).toEqual({ ok: true, modes: { accessMode: 'ReadWriteMany', volumeMode: 'Block' } });
  });

  it('default to ReadWriteOnce Filesystem for a profile without sets', () => {
    const c = cls('nfs.csi.k8s.io');
    expect(preferredModes({ ...profileOf(c), status: {} })).toEqual({ accessMode: 'ReadWriteOnce', volumeMode: 'Filesystem' });
  });
});

describe('the status of a profile', () => {
  it('states the class, its provisioner and the sets known for it', () => {
    expect(profileStatus(cls('nfs.csi.k8s.io'), {})).toEqual({
      storageClass: 'fast',
      provisioner: 'nfs.csi.k8s.io',
      claimPropertySets: [{ accessModes: ['ReadWriteMany'], volumeMode: 'Filesystem' }],
      cloneStrategy: 'copy',
      dataImportCronSourceFormat: 'pvc',
    });
  });

  it('takes the spec when a user set claim property sets', () => {
    const sets = [{ accessModes: ['ReadWriteOnce' as const], volumeMode: 'Block' as const }];
    expect(profileStatus(cls('nfs.csi.k8s.io'), { claimPropertySets: sets, snapshotClass: 'snaps' })).toMatchObject({
      claimPropertySets: sets,
      snapshotClass: 'snaps',
    });
  });
});
