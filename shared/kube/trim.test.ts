import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

  it("leaves the copy's metadata with V8's fast properties, not the dictionary a deleted key makes (2.6x the memory in every cache)", () => {
    // V8's own answer (%HasFastProperties), from a node started to give it.
    const script = `
      const { withoutManagedFields } = await import(${JSON.stringify(fileURLToPath(new URL('./trim.ts', import.meta.url)))});
      const raw = JSON.parse('{"metadata":{"name":"n","namespace":"ns","uid":"u","labels":{"a":"b"},"managedFields":[{"manager":"m"}]}}');
      const copied = { ...raw.metadata };
      delete copied.managedFields;
      console.log(JSON.stringify({ trimmed: %HasFastProperties(withoutManagedFields(raw).metadata), deleted: %HasFastProperties(copied) }));`;
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ trimmed: true, deleted: false });
  });
});
