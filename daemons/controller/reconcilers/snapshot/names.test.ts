import { describe, expect, it } from '@jest/globals';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualDiskSnapshot } from '../../../../shared/api/resources/snapshots.js';
import { diskFromSnapshot } from './captured.js';
import { cloneName } from './clone.js';
import { volumeSnapshotNameOf } from './vdsnapshot/reconciler.js';
import { diskSnapshotNameOf } from './vmsnapshot/reconciler.js';

type CloneSpec = Parameters<typeof cloneName>[0];

describe('the names Clone gives', () => {
  it.each<[string, CloneSpec, string, string, string]>([
    ['prefix and suffix', { mode: 'Strict', customization: { namePrefix: 'a-', nameSuffix: '-z' } }, 'VirtualDisk', 'root', 'a-root-z'],
    ['only a suffix', { mode: 'Strict', customization: { nameSuffix: '-2' } }, 'VirtualMachine', 'web', 'web-2'],
    [
      'a replacement of that kind wins over the affixes',
      { mode: 'Strict', customization: { namePrefix: 'a-' }, nameReplacement: [{ from: { kind: 'VirtualMachine', name: 'web' }, to: 'twin' }] },
      'VirtualMachine',
      'web',
      'twin',
    ],
    [
      'a replacement of another kind does not apply',
      { mode: 'Strict', customization: { namePrefix: 'a-' }, nameReplacement: [{ from: { kind: 'VirtualMachine', name: 'web' }, to: 'twin' }] },
      'VirtualDisk',
      'web',
      'a-web',
    ],
    ['a replacement without a kind applies to any', { mode: 'Strict', nameReplacement: [{ from: { name: 'web' }, to: 'twin' }] }, 'VirtualDisk', 'web', 'twin'],
    [
      'a replacement with an empty kind applies to any',
      { mode: 'Strict', nameReplacement: [{ from: { kind: '', name: 'web' }, to: 'twin' }] },
      'VirtualMachine',
      'web',
      'twin',
    ],
    ['no rule for the name: unchanged', { mode: 'Strict', nameReplacement: [{ from: { name: 'other' }, to: 'x' }] }, 'VirtualDisk', 'web', 'web'],
  ])('%s', (_what, spec, kind, name, want) => {
    expect(cloneName(spec, kind, name)).toBe(want);
  });
});

describe('the names snapshots give what they make', () => {
  const vds = (name: string): VirtualDiskSnapshot => ({
    apiVersion: API_VERSION,
    kind: 'VirtualDiskSnapshot',
    metadata: { name, namespace: 'ns', uid: '0f0e0d0c-1111-2222-3333-444455556666' },
    spec: { virtualDiskName: 'd', requiredConsistency: true },
  });

  it('a VolumeSnapshot is vds-<name>-<uid>, shortened with a hash to a valid name when long', () => {
    expect(volumeSnapshotNameOf(vds('s'))).toBe('vds-s-0f0e0d0c-1111-2222-3333-444455556666');
    const long = volumeSnapshotNameOf(vds('x'.repeat(253)));
    expect(long.length).toBeLessThanOrEqual(253);
    expect(long).not.toBe(volumeSnapshotNameOf(vds(`${'x'.repeat(252)}y`)));
  });

  it('a disk snapshot of a VM snapshot is <snapshot>-<disk>', () => {
    const vms = { metadata: { name: 'nightly' } } as Parameters<typeof diskSnapshotNameOf>[0];
    expect(diskSnapshotNameOf(vms, 'root')).toBe('nightly-root');
  });
});

describe('a disk recreated from a snapshot', () => {
  it('keeps the captured size, class, labels and annotations, takes the snapshot as its source and carries the tag', () => {
    const disk = diskFromSnapshot(
      {
        disk: {
          apiVersion: API_VERSION,
          kind: 'VirtualDisk',
          metadata: { name: 'root', labels: { app: 'web' }, annotations: { note: 'kept' } },
          spec: {
            dataSource: { type: 'HTTP', http: { url: 'http://example.invalid/disk.img' } },
            persistentVolumeClaim: { size: '2Gi', storageClassName: 'fast' },
          },
        },
        snapshot: 'nightly-root',
      },
      'copy-root',
      'ns',
      { 'virtualization.deckhouse.io/vmopclone': 'uid-1' },
    );
    expect(disk).toEqual({
      apiVersion: API_VERSION,
      kind: 'VirtualDisk',
      metadata: { name: 'copy-root', namespace: 'ns', labels: { app: 'web' }, annotations: { note: 'kept', 'virtualization.deckhouse.io/vmopclone': 'uid-1' } },
      spec: {
        dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualDiskSnapshot', name: 'nightly-root' } },
        persistentVolumeClaim: { size: '2Gi', storageClassName: 'fast' },
      },
    });
  });
});
