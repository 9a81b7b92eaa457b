import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { KUBEVIRT_RULES, ListRestoreStream, Renamer, planRequest, restoreDocument, restoreListBody, type ListStreamState } from './index.js';

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

/** The document parsed, restored and serialized whole (what the proxy sends for anything but a list). */
const whole = (raw: string, plan = LIST_PLAN): string => JSON.stringify(restoreDocument(r, plan, JSON.parse(raw)));
/** The same JSON value as `whole`, with `items` first: what a list restored item by item gives. */
const itemsFirst = (raw: string): string => {
  const { items, ...fields } = JSON.parse(whole(raw)) as Record<string, unknown>;
  return JSON.stringify({ items, ...fields });
};
const pieces = (raw: string, plan = LIST_PLAN): string | undefined => {
  const out = restoreListBody(r, plan, Buffer.from(raw));
  return out === undefined ? undefined : Buffer.concat(out).toString('utf8');
};

describe('restoreListBody', () => {
  it('restores a list item by item to what restoring the whole document gives, items first', () => {
    const raw = JSON.stringify(list(Array.from({ length: 300 }, (_, i) => vm(i))));
    const out = pieces(raw);
    expect(out).toBe(itemsFirst(raw));
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

  it('keeps the order of the other list fields and takes any formatting, empty lists and items without kind', () => {
    for (const doc of [
      list([vm(1), vm(2)]),
      { kind: 'InternalVirtualizationVirtualMachineList', metadata: {}, items: [vm(1)], apiVersion: `${INT}/v1` },
      list([]),
      list([{ metadata: { labels: { [`kubevirt.${INT}/vm`]: 'a' } } }, null, 3, 'x', [1, [2]]]),
    ]) {
      for (const raw of [JSON.stringify(doc), JSON.stringify(doc, null, 2), ` \n${JSON.stringify(doc, null, '\t')}\r\n `]) {
        expect({ raw, out: pieces(raw) }).toEqual({ raw, out: itemsFirst(raw) });
      }
    }
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

  it('never answers for a truncated or broken list: undefined, and the whole parse fails', () => {
    const raw = JSON.stringify(list([vm(1), vm(2)]));
    for (let cut = 0; cut < raw.length; cut++) {
      expect({ cut, out: pieces(raw.slice(0, cut)) }).toEqual({ cut, out: undefined });
    }
    for (const broken of [
      raw.replace('"vm-2"', 'vm-2'),
      raw.replace('"metadata":{"resourceVersion"', '"metadata":{resourceVersion'),
      raw.replace(/}\]/, '},]'),
      raw.replace('"items":[', '"items":[,'),
      `${raw}x`,
      `${raw}}`,
    ]) {
      expect((): unknown => JSON.parse(broken)).toThrow(SyntaxError);
      expect({ broken, out: pieces(broken) }).toEqual({ broken, out: undefined });
    }
  });
});

/** The raw answer pushed in chunks of `size` bytes; the output, the states seen and the most bytes kept. */
const streamed = (raw: string, size: number): { out: string; states: ListStreamState[]; maxPending: number } => {
  const out: Buffer[] = [];
  const stream = new ListRestoreStream(r, LIST_PLAN, (b) => out.push(b));
  const bytes = Buffer.from(raw);
  const states: ListStreamState[] = [];
  let maxPending = 0;
  for (let i = 0; i < bytes.length; i += size) {
    const state = stream.push(bytes.subarray(i, i + size));
    if (states.at(-1) !== state) states.push(state);
    if (state === 'not-list') return { out: '', states, maxPending };
    maxPending = Math.max(maxPending, stream.pendingBytes);
  }
  stream.end();
  return { out: Buffer.concat(out).toString('utf8'), states, maxPending };
};

describe('ListRestoreStream', () => {
  it('restores a list while its bytes arrive, in any chunking, to what the whole-document restore holds (items first)', () => {
    const raw = JSON.stringify(list(Array.from({ length: 50 }, (_, i) => vm(i))));
    const expected: unknown = JSON.parse(whole(raw));
    for (const size of [1, 2, 3, 7, 64, 1000, raw.length]) {
      const { out, states } = streamed(raw, size);
      expect(JSON.parse(out)).toEqual(expected);
      expect(out.startsWith('{"items":[{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine"')).toBe(true);
      expect(states.at(-1)).toBe('streaming');
    }
  });

  it('keeps only the element being read: 1,000 items stream with a bound far below the answer', () => {
    const raw = JSON.stringify(list(Array.from({ length: 1000 }, (_, i) => vm(i))));
    const { out, maxPending } = streamed(raw, 16 * 1024);
    expect(JSON.parse(out)).toEqual(JSON.parse(whole(raw)));
    expect(raw.length).toBeGreaterThan(500_000);
    expect(maxPending).toBeLessThan(2 * 16 * 1024);
  });

  it('gives the same document as the whole restore for any items, formatting and chunking, read whole too (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 8 }),
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 1, max: 50 }),
        (items, extra, pretty, kindFirst, size) => {
          const base = list(items);
          const doc = kindFirst ? { kind: base.kind, ...extra, ...base } : { ...extra, ...base };
          if (Object.keys(doc).indexOf('items') < 0) return;
          const raw = pretty ? JSON.stringify(doc, null, 1) : JSON.stringify(doc);
          const { out, states } = streamed(raw, size);
          if (states.includes('not-list')) {
            // Only when a field before items is not what a list has (a kind that is no list kind).
            expect(restoreListBody(r, LIST_PLAN, Buffer.from(raw))).toBeUndefined();
            return;
          }
          expect(JSON.parse(out)).toEqual(JSON.parse(whole(raw)));
          // Read whole (restoreListBody: the same scanner, one chunk), the same document.
          expect(JSON.parse(pieces(raw) ?? 'null')).toEqual(JSON.parse(whole(raw)));
        },
      ),
    );
  });

  it('gives items without a kind the list item kind as hint even when the kind comes after the items', () => {
    const kindless = { metadata: { labels: { [`kubevirt.${INT}/vm`]: 'a' } } };
    for (const doc of [list([vm(1), kindless, vm(2)]), { kind: 'InternalVirtualizationVirtualMachineList', ...list([kindless, vm(3)]) }]) {
      const raw = JSON.stringify(doc);
      expect(JSON.parse(streamed(raw, 5).out)).toEqual(JSON.parse(whole(raw)));
    }
  });

  it('answers not-list, keeping every byte, for what is not an object with an items array', () => {
    for (const raw of [
      JSON.stringify(vm(1)),
      '[{"kind":"XList","items":[1]}]',
      'not json at all',
      '{"kind":"APIGroupDiscoveryList","items":[{}]}',
      '{"kind":"Table","rows":[],"items":[]}',
      '{"kind":"XList","items":{"a":1}}',
      '{"kind":"XList" "items":[1]}',
    ]) {
      const stream = new ListRestoreStream(r, LIST_PLAN, () => {
        throw new Error('nothing may be written');
      });
      const state = stream.push(Buffer.from(raw));
      expect({ raw, state, kept: stream.received().toString() }).toEqual({ raw, state: 'not-list', kept: raw });
    }
  });

  it('never finishes a truncated or broken list: end or push throws SyntaxError, or nothing was streamed', () => {
    const raw = JSON.stringify(list([vm(1), vm(2)]));
    for (let cut = 0; cut < raw.length; cut++) {
      const out: Buffer[] = [];
      const stream = new ListRestoreStream(r, LIST_PLAN, (b) => out.push(b));
      const state = stream.push(Buffer.from(raw.slice(0, cut)));
      expect(() => stream.end()).toThrow(SyntaxError);
      // What was written is never a whole JSON document.
      if (state === 'streaming') expect((): unknown => JSON.parse(Buffer.concat(out).toString())).toThrow(SyntaxError);
    }
    for (const broken of [
      raw.replace('"vm-2"', 'vm-2'),
      raw.replace('"metadata":{"resourceVersion"', '"metadata":{resourceVersion'),
      raw.replace(/}\]/, '},]'),
      raw.replace('"items":[', '"items":[,'),
      raw.replace('}],"kind"', '}},"kind"'),
      `${raw}x`,
      `${raw}}`,
      `${raw.slice(0, -1)},"items":[]}`,
      raw.replace('"kind":"InternalVirtualizationVirtualMachineList"', '"kind":"InternalVirtualizationVirtualMachine"'),
    ]) {
      const stream = new ListRestoreStream(r, LIST_PLAN, () => undefined);
      expect(() => {
        stream.push(Buffer.from(broken));
        stream.end();
      }).toThrow(SyntaxError);
    }
  });
});
