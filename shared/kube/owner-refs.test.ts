import { describe, expect, it } from '@jest/globals';
import { BadRequestError, ConflictError } from '../errors/index.js';
import type { KubeObject } from './descriptor.js';
import { controllerRefOf, hasControllerReference, ownerReferenceTo, withControllerReference } from './owner-refs.js';

const vm: KubeObject = { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualMachine', metadata: { namespace: 'ns', name: 'vm', uid: 'u-vm' } };
const other: KubeObject = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { namespace: 'ns', name: 'rs', uid: 'u-rs' } };
const pod = (refs?: KubeObject['metadata']['ownerReferences']): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'ns', name: 'p', uid: 'u-p', ...(refs ? { ownerReferences: refs } : {}) },
});

describe('ownerReferences', () => {
  it('builds a reference from the owner identity', () => {
    expect(ownerReferenceTo(vm)).toEqual({ apiVersion: vm.apiVersion, kind: 'VirtualMachine', name: 'vm', uid: 'u-vm' });
    expect(ownerReferenceTo(vm, { controller: true, blockOwnerDeletion: true })).toMatchObject({ controller: true, blockOwnerDeletion: true });
  });

  it('refuses an owner without a uid', () => {
    expect(() => ownerReferenceTo({ ...vm, metadata: { name: 'vm' } })).toThrow(BadRequestError);
  });

  it('sets the controller reference and keeps other owners', () => {
    const plain = ownerReferenceTo(other);
    const refs = withControllerReference(pod([plain]), vm);
    expect(refs).toEqual([plain, { ...ownerReferenceTo(vm), controller: true, blockOwnerDeletion: true }]);
    expect(hasControllerReference({ ...pod(), metadata: { ...pod().metadata, ownerReferences: refs } }, vm)).toBe(true);
  });

  it('is idempotent for the same controller', () => {
    const once = withControllerReference(pod(), vm);
    expect(withControllerReference(pod(once), vm)).toEqual(once);
  });

  it('refuses a second controller', () => {
    const controlled = pod([ownerReferenceTo(other, { controller: true })]);
    expect(() => withControllerReference(controlled, vm)).toThrow(ConflictError);
    expect(hasControllerReference(controlled, vm)).toBe(false);
    expect(controllerRefOf(controlled)?.uid).toBe('u-rs');
  });

  it('refuses an owner from another namespace', () => {
    const elsewhere = { ...vm, metadata: { ...vm.metadata, namespace: 'other' } };
    expect(() => withControllerReference(pod(), elsewhere)).toThrow(BadRequestError);
  });
});
