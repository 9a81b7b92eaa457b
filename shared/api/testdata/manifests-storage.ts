/** Table cases: VirtualDisk, VirtualImage, ClusterVirtualImage, VirtualMachineBlockDeviceAttachment. */
import { invalid, type Manifest, type ManifestCase } from './table.js';

/** The original's CEL message for a cluster image from a namespaced source without namespace. */
const NAMESPACE_REQUIRED = 'The namespace is required for VirtualDisk, VirtualImage and VirtualDiskSnapshot';

const API = 'virtualization.deckhouse.io/v1alpha2';
const object = (kind: string, spec: Record<string, unknown>): Manifest => ({
  apiVersion: API,
  kind,
  metadata: { name: kind.toLowerCase() },
  spec,
});

const vd = (spec: Record<string, unknown>) => object('VirtualDisk', spec);
const vi = (spec: Record<string, unknown>) => object('VirtualImage', spec);
const cvi = (spec: Record<string, unknown>) => object('ClusterVirtualImage', spec);

const SHA256 = 'a'.repeat(64);
const http = { type: 'HTTP', http: { url: 'https://example.com/disk.qcow2', checksum: { sha256: SHA256 } } };
const image = { type: 'ContainerImage', containerImage: { image: 'registry.example.com:5000/images/ubuntu:22.04' } };

export const STORAGE_CASES: ManifestCase[] = [
  { name: 'a blank disk with a size is accepted', manifest: vd({ persistentVolumeClaim: { size: '10Gi' } }), expect: { valid: true } },
  { name: 'a disk imported over HTTP with a checksum is accepted', manifest: vd({ dataSource: http }), expect: { valid: true } },
  {
    name: 'a disk copied from a VirtualImage is accepted',
    manifest: vd({
      dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'ubuntu' } },
      persistentVolumeClaim: { storageClassName: 'fast' },
    }),
    expect: { valid: true },
  },
  { name: 'an upload disk without upload settings is accepted', manifest: vd({ dataSource: { type: 'Upload' } }), expect: { valid: true } },
  {
    name: 'type HTTP with a containerImage instead of http is rejected',
    manifest: vd({ dataSource: { type: 'HTTP', containerImage: image.containerImage } }),
    expect: invalid('spec.dataSource.http'),
  },
  {
    name: 'upload settings with type HTTP are rejected',
    manifest: vd({ dataSource: { ...http, upload: {} } }),
    expect: invalid('spec.dataSource.upload'),
  },
  {
    name: 'a disk copied from another VirtualDisk is rejected',
    manifest: vd({ dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualDisk', name: 'x' } } }),
    expect: invalid('spec.dataSource.objectRef.kind'),
  },
  {
    name: 'an md5 checksum of the wrong length is rejected',
    manifest: vd({ dataSource: { type: 'HTTP', http: { url: 'http://x/y', checksum: { md5: 'abc' } } } }),
    expect: invalid('spec.dataSource.http.checksum.md5'),
  },
  {
    name: 'an ftp URL is rejected',
    manifest: vd({ dataSource: { type: 'HTTP', http: { url: 'ftp://example.com/disk.img' } } }),
    expect: invalid('spec.dataSource.http.url'),
  },
  {
    name: 'a disk size that is not a quantity is rejected',
    manifest: vd({ persistentVolumeClaim: { size: 'big' } }),
    expect: invalid('spec.persistentVolumeClaim.size'),
  },
  {
    name: 'an unknown data source type is rejected',
    manifest: vd({ dataSource: { type: 'S3' } }),
    expect: invalid('spec.dataSource.type'),
  },
  {
    name: 'an image from a registry is stored in ContainerRegistry by default',
    manifest: vi({ dataSource: image }),
    expect: { valid: true, defaults: { 'spec.storage': 'ContainerRegistry' } },
  },
  {
    name: 'an image on a PVC copied from a VirtualDisk is accepted',
    manifest: vi({
      storage: 'PersistentVolumeClaim',
      persistentVolumeClaim: { storageClassName: 'fast' },
      dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualDisk', name: 'root' } },
    }),
    expect: { valid: true },
  },
  { name: 'an unknown image storage is rejected', manifest: vi({ storage: 'S3', dataSource: http }), expect: invalid('spec.storage') },
  { name: 'an image without dataSource is rejected', manifest: vi({}), expect: invalid('spec.dataSource') },
  {
    name: 'an image reference with spaces is rejected',
    manifest: vi({ dataSource: { type: 'ContainerImage', containerImage: { image: 'not an image' } } }),
    expect: invalid('spec.dataSource.containerImage.image'),
  },
  {
    name: 'a cluster image copied from a namespaced VirtualImage is accepted',
    manifest: cvi({ dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'ubuntu', namespace: 'images' } } }),
    expect: { valid: true },
  },
  {
    name: 'a cluster image copied from a ClusterVirtualImage needs no namespace',
    manifest: cvi({ dataSource: { type: 'ObjectRef', objectRef: { kind: 'ClusterVirtualImage', name: 'ubuntu' } } }),
    expect: { valid: true },
  },
  {
    name: 'a cluster image copied from a VirtualImage without namespace is rejected',
    manifest: cvi({ dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'ubuntu' } } }),
    expect: invalid('spec.dataSource.objectRef.namespace', NAMESPACE_REQUIRED),
  },
  {
    name: 'a caBundle that is not base64 is rejected',
    manifest: cvi({ dataSource: { type: 'HTTP', http: { url: 'https://x/y', caBundle: 'not base64!' } } }),
    expect: invalid('spec.dataSource.http.caBundle'),
  },
  { name: 'a cluster image without dataSource type is rejected', manifest: cvi({ dataSource: {} }), expect: invalid('spec.dataSource.type') },
  {
    name: 'image references of the OCI grammar are accepted: other digest algorithms, double underscores, IPv6 hosts',
    manifest: vi({
      dataSource: {
        type: 'ContainerImage',
        containerImage: { image: `[fd00::1]:5000/team__a/my-image@sha512:${'b'.repeat(128)}` },
      },
    }),
    expect: { valid: true },
  },
  {
    name: 'an image reference with a digest of another algorithm family is accepted',
    manifest: vd({ dataSource: { type: 'ContainerImage', containerImage: { image: `ubuntu:22.04@multihash+base58:${'c'.repeat(40)}` } } }),
    expect: { valid: true },
  },
  {
    name: 'an image reference with an upper-case path is rejected',
    manifest: vd({ dataSource: { type: 'ContainerImage', containerImage: { image: 'registry.example.com/Images/ubuntu' } } }),
    expect: invalid('spec.dataSource.containerImage.image'),
  },
  {
    name: 'an image reference with a digest shorter than 32 hex digits is rejected',
    manifest: vd({ dataSource: { type: 'ContainerImage', containerImage: { image: 'ubuntu@sha256:abc' } } }),
    expect: invalid('spec.dataSource.containerImage.image'),
  },
  {
    name: 'an image reference with a tag over 128 characters is rejected',
    manifest: vd({ dataSource: { type: 'ContainerImage', containerImage: { image: `ubuntu:${'t'.repeat(129)}` } } }),
    expect: invalid('spec.dataSource.containerImage.image'),
  },
  { name: 'an empty image reference is rejected', manifest: vd({ dataSource: { type: 'ContainerImage', containerImage: { image: '' } } }), expect: invalid('spec.dataSource.containerImage.image') },
  {
    name: 'an empty imagePullSecret name is rejected',
    manifest: vd({ dataSource: { type: 'ContainerImage', containerImage: { image: 'ubuntu', imagePullSecret: { name: '' } } } }),
    expect: invalid('spec.dataSource.containerImage.imagePullSecret.name'),
  },
  {
    name: 'a URL with a query string is accepted',
    manifest: vd({ dataSource: { type: 'HTTP', http: { url: 'https://example.com/disk.img?token=a%20b&x=1' } } }),
    expect: { valid: true },
  },
  {
    name: 'a URL with a fragment is rejected, as by the original pattern',
    manifest: vd({ dataSource: { type: 'HTTP', http: { url: 'https://example.com/disk.img#part' } } }),
    expect: invalid('spec.dataSource.http.url'),
  },
  {
    name: 'a URL with a space is rejected',
    manifest: vd({ dataSource: { type: 'HTTP', http: { url: 'https://example.com/my disk.img' } } }),
    expect: invalid('spec.dataSource.http.url'),
  },
  {
    name: 'a URL that is a number is rejected',
    manifest: vd({ dataSource: { type: 'HTTP', http: { url: 42 } } }),
    expect: invalid('spec.dataSource.http.url'),
  },
  {
    name: 'an empty source name of a disk is rejected',
    manifest: vd({ dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: '' } } }),
    expect: invalid('spec.dataSource.objectRef.name'),
  },
  {
    name: 'an image copied from a VirtualMachine is rejected',
    manifest: vi({ dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualMachine', name: 'vm' } } }),
    expect: invalid('spec.dataSource.objectRef.kind'),
  },
  {
    name: 'an empty source name of an image is rejected',
    manifest: vi({ dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualDisk', name: '' } } }),
    expect: invalid('spec.dataSource.objectRef.name'),
  },
  {
    name: 'a cluster image copied from a VirtualDisk with an empty namespace is rejected',
    manifest: cvi({ dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualDisk', name: 'root', namespace: '' } } }),
    expect: invalid('spec.dataSource.objectRef.namespace', NAMESPACE_REQUIRED),
  },
  {
    name: 'a cluster image copied from a VirtualDiskSnapshot in a namespace of 64 characters is rejected',
    manifest: cvi({ dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualDiskSnapshot', name: 's', namespace: 'n'.repeat(64) } } }),
    expect: invalid('spec.dataSource.objectRef.namespace', 'The namespace must be no longer than 63 characters.'),
  },
  {
    name: 'an attachment of a disk to a VM is accepted',
    manifest: object('VirtualMachineBlockDeviceAttachment', {
      blockDeviceRef: { kind: 'VirtualDisk', name: 'data' },
      virtualMachineName: 'vm',
    }),
    expect: { valid: true },
  },
  {
    name: 'an attachment without virtualMachineName is rejected',
    manifest: object('VirtualMachineBlockDeviceAttachment', { blockDeviceRef: { kind: 'VirtualDisk', name: 'data' } }),
    expect: invalid('spec.virtualMachineName'),
  },
  {
    name: 'an attachment of a device with an empty name is rejected',
    manifest: object('VirtualMachineBlockDeviceAttachment', { blockDeviceRef: { kind: 'VirtualDisk', name: '' }, virtualMachineName: 'vm' }),
    expect: invalid('spec.blockDeviceRef.name'),
  },
  {
    name: 'an attachment to a VM with an empty name is rejected',
    manifest: object('VirtualMachineBlockDeviceAttachment', { blockDeviceRef: { kind: 'VirtualDisk', name: 'd' }, virtualMachineName: '' }),
    expect: invalid('spec.virtualMachineName'),
  },
  {
    name: 'an attachment of a VirtualMachine is rejected',
    manifest: object('VirtualMachineBlockDeviceAttachment', {
      blockDeviceRef: { kind: 'VirtualMachine', name: 'data' },
      virtualMachineName: 'vm',
    }),
    expect: invalid('spec.blockDeviceRef.kind'),
  },
];

const profile = (spec?: Record<string, unknown>): Manifest => ({
  apiVersion: 'storage.virtualization.deckhouse.io/v1alpha1',
  kind: 'StorageProfile',
  metadata: { name: 'fast' },
  ...(spec !== undefined ? { spec } : {}),
});

export const STORAGE_PROFILE_CASES: ManifestCase[] = [
  { name: 'a storage profile with an empty spec is accepted', manifest: profile({}), expect: { valid: true } },
  {
    name: 'a storage profile naming RWX block claims is accepted',
    manifest: profile({ claimPropertySets: [{ accessModes: ['ReadWriteMany'], volumeMode: 'Block' }] }),
    expect: { valid: true },
  },
  { name: 'a storage profile without spec is rejected', manifest: profile(), expect: invalid('spec') },
  {
    name: 'a storage profile with an unknown volume mode is rejected',
    manifest: profile({ claimPropertySets: [{ accessModes: ['ReadWriteOnce'], volumeMode: 'Tape' }] }),
    expect: invalid('spec.claimPropertySets[0].volumeMode'),
  },
  {
    name: 'a storage profile with an unknown access mode is rejected',
    manifest: profile({ claimPropertySets: [{ accessModes: ['WriteSometimes'], volumeMode: 'Block' }] }),
    expect: invalid('spec.claimPropertySets[0].accessModes[0]'),
  },
];
