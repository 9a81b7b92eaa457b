import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { KUBEVIRT_RULES, Renamer, planRequest, restoreDocument, restoreListBody, splitListItems } from './index.js';

const r = new Renamer(KUBEVIRT_RULES);
const INT = 'internal.virtualization.deckhouse.io';
const LIST_PLAN = planRequest(r, '/apis/kubevirt.io/v1/namespaces/ns/virtualmachines');

const vm = (i: number): Record<string, unknown> => ({
  apiVersion: `${INT}/v1`,
  kind: 'InternalVirtualizationVirtualMachine',
  metadata: {
    name: `vm-${i}`,
    namespace: 'ns',
    labels: { [`kubevirt.${INT}/vm`]: `vm-${i}`, app: 'x' },
    annotations: { [`kubevirt.${INT}/latest-observed-api-version`]: 'v1', note: 'a "quoted" [bracket] {brace}, \\ and ] } in a string' },
    finalizers: [`kubevirt.${INT}/virtualMachineControllerFinalize`],
    ownerReferences: [{ apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachineInstance', name: `vm-${i}`, uid: 'u' }],
  },
  spec: { runStrategy: 'Always', template: { spec: { domain: { devices: { disks: [{ name: 'root' }] } } } } },
});

const list = (items: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: `${INT}/v1`,
  items,
  kind: 'InternalVirtualizationVirtualMachineList',
  metadata: { resourceVersion: '42', continue: '' },
  ...extra,
});

/** What the proxy sent before: the document parsed, restored and serialized whole. */
const whole = (raw: string, plan = LIST_PLAN): string => JSON.stringify(restoreDocument(r, plan, JSON.parse(raw)));
const pieces = (raw: string, plan = LIST_PLAN): string | undefined => {
  const out = restoreListBody(r, plan, Buffer.from(raw));
  return out === undefined ? undefined : Buffer.concat(out).toString('utf8');
};

describe('restoreListBody', () => {
  it('restores a list item by item to exactly what restoring the whole document gives', () => {
    const raw = JSON.stringify(list(Array.from({ length: 300 }, (_, i) => vm(i))));
    const out = pieces(raw);
    expect(out).toBe(whole(raw));
    const doc = JSON.parse(out ?? '') as { kind: string; items: { kind: string; metadata: { labels: Record<string, string> } }[] };
    expect([doc.kind, doc.items.length, doc.items[7]?.kind, doc.items[7]?.metadata.labels]).toEqual([
      'VirtualMachineList',
      300,
      'VirtualMachine',
      { 'kubevirt.io/vm': 'vm-7', app: 'x' },
    ]);
    // Large enough to be cut into several Buffers.
    expect(restoreListBody(r, LIST_PLAN, Buffer.from(raw))?.length).toBeGreaterThan(1);
  });

  it('keeps the order of the list fields and takes any formatting, empty lists and items without kind', () => {
    for (const doc of [
      list([vm(1), vm(2)]),
      { kind: 'InternalVirtualizationVirtualMachineList', metadata: {}, items: [vm(1)], apiVersion: `${INT}/v1` },
      list([]),
      list([{ metadata: { labels: { [`kubevirt.${INT}/vm`]: 'a' } } }, null, 3, 'x', [1, [2]]]),
    ]) {
      for (const raw of [JSON.stringify(doc), JSON.stringify(doc, null, 2), ` \n${JSON.stringify(doc, null, '\t')}\r\n `]) {
        expect({ raw, out: pieces(raw) }).toEqual({ raw, out: whole(raw) });
      }
    }
  });

  it('gives the same bytes as the whole-document restore for any items (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 8 }),
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
        fc.boolean(),
        (items, extra, pretty) => {
          const doc = { ...extra, ...list(items) };
          const raw = pretty ? JSON.stringify(doc, null, 1) : JSON.stringify(doc);
          expect(pieces(raw)).toBe(whole(raw));
        },
      ),
    );
  });

  it('leaves what is not a list to the whole-document restore (undefined)', () => {
    const table = { kind: 'Table', apiVersion: 'meta.k8s.io/v1', rows: [{ object: vm(1) }], items: [] };
    const discovery = { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', items: [{ metadata: { name: INT } }] };
    for (const doc of [
      vm(1),
      table,
      discovery,
      { kind: 'Status', items: [] },
      list([]).metadata,
      { kind: 'XList', items: {} },
      { kind: 'XList', items: 'a' },
    ]) {
      expect(pieces(JSON.stringify(doc))).toBeUndefined();
    }
    // `items` spelled with an escape, nested only, twice, or a top level that is not an object.
    expect(pieces('{"kind":"XList","it\\u0065ms":[1]}')).toBeUndefined();
    expect(pieces('{"kind":"XList","metadata":{"items":[1]}}')).toBeUndefined();
    expect(pieces('{"kind":"XList","items":[1],"items":[2]}')).toBeUndefined();
    expect(pieces('[{"kind":"XList","items":[1]}]')).toBeUndefined();
    expect(pieces(JSON.stringify(list([vm(1)])), planRequest(r, '/openapi/v2'))).toBeUndefined();
  });

  it('never answers for a truncated or broken list: undefined or a SyntaxError, as the whole parse would fail', () => {
    const raw = JSON.stringify(list([vm(1), vm(2)]));
    for (let cut = 0; cut < raw.length; cut++) {
      const prefix = raw.slice(0, cut);
      let out: string | undefined;
      try {
        out = pieces(prefix);
      } catch (err: unknown) {
        expect(err).toBeInstanceOf(SyntaxError);
      }
      expect({ cut, out }).toEqual({ cut, out: undefined });
    }
    for (const broken of [
      raw.replace('"vm-2"', 'vm-2'),
      raw.replace('"metadata":{"resourceVersion"', '"metadata":{resourceVersion'),
      raw.replace(/}\]/, '},]'),
      raw.replace('"items":[', '"items":[,'),
      `${raw}x`,
      `${raw}}`,
    ]) {
      let out: string | undefined;
      try {
        out = pieces(broken);
      } catch (err: unknown) {
        expect(err).toBeInstanceOf(SyntaxError);
      }
      expect((): unknown => JSON.parse(broken)).toThrow(SyntaxError);
      expect({ broken, out }).toEqual({ broken, out: undefined });
    }
  });
});

describe('splitListItems', () => {
  it('finds each element of the top-level items array, strings with brackets and escapes included', () => {
    const raw = Buffer.from('{"a":{"items":[9]}, "items" : [ {"x":"]\\"},"} , [1,2],"s\\\\" ,3 ],"z":"items"}');
    const split = splitListItems(raw);
    expect(split?.items.map(([s, e]) => raw.toString('utf8', s, e))).toEqual(['{"x":"]\\"},"}', '[1,2]', '"s\\\\"', '3']);
    expect(raw.toString('utf8', split?.itemsStart, split?.itemsEnd)).toBe('[ {"x":"]\\"},"} , [1,2],"s\\\\" ,3 ]');
  });
});
