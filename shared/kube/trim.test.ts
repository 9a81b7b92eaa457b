import { describe, expect, it } from '@jest/globals';
import { withoutManagedFields } from './trim.js';

describe('withoutManagedFields', () => {
  const managedFields = [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': {} } }];
  const obj = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', resourceVersion: '7', labels: { a: 'b' }, managedFields }, spec: { x: 1 } };

  it('drops managedFields and keeps everything else as it was', () => {
    const trimmed = withoutManagedFields(obj);
    expect(trimmed).toEqual({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', resourceVersion: '7', labels: { a: 'b' } }, spec: { x: 1 } });
    expect(obj.metadata.managedFields).toBe(managedFields);
  });

  it('returns an object without them as it is', () => {
    const plain = { metadata: { name: 'n' } };
    expect(withoutManagedFields(plain)).toBe(plain);
  });

  it('drops managedFields of any shape (null, a string) without throwing', () => {
    for (const odd of [null, 'x', 42]) expect(withoutManagedFields({ metadata: { name: 'n', managedFields: odd } })).toEqual({ metadata: { name: 'n' } });
  });
});
