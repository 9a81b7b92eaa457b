import { describe, expect, it } from '@jest/globals';
import { KUBEVIRT_RULES, Renamer, planRequest, restoreDocument, restoreObjectText } from './index.js';

const r = new Renamer(KUBEVIRT_RULES);
const INT = 'internal.virtualization.deckhouse.io';
const plan = planRequest(r, '/apis/kubevirt.io/v1/namespaces/ns/virtualmachines/vm-1');

/** What the parsed path answers for the same text. */
function parsedRestore(text: string): unknown {
  return restoreDocument(r, plan, JSON.parse(text));
}

function vm(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: `${INT}/v1`,
    kind: 'InternalVirtualizationVirtualMachine',
    metadata: {
      name: 'vm-1',
      namespace: 'ns',
      labels: { [`kubevirt.${INT}/vm`]: 'vm-1', 'kubevirt.io/vm': 'written-in-original-form', app: 'web', [`vm.${INT}/name`]: 'vm-1' },
      annotations: { [`kubevirt.${INT}/latest-observed-api-version`]: 'v1', note: `kubevirt.${INT}/vm stays: a value` },
      finalizers: [`kubevirt.${INT}/virtualMachineControllerFinalize`, 'other/finalizer'],
      ownerReferences: [{ apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachineInstance', name: 'x', uid: 'u' }],
      managedFields: [
        {
          apiVersion: `${INT}/v1`,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:labels': { '.': {}, [`f:kubevirt.${INT}/vm`]: {}, 'f:app': {} },
              'f:annotations': { [`f:kubevirt.${INT}/latest-observed-api-version`]: {} },
              'f:finalizers': { '.': {}, [`v:"kubevirt.${INT}/virtualMachineControllerFinalize"`]: {} },
            },
            'f:spec': { 'f:template': { 'f:metadata': { 'f:labels': { [`f:kubevirt.${INT}/domain`]: {} } } } },
          },
          manager: 'virt-controller',
          operation: 'Update',
        },
      ],
    },
    spec: {
      runStrategy: 'Always',
      template: { metadata: { labels: { [`kubevirt.${INT}/domain`]: 'vm-1' } }, spec: { domain: { cpu: { cores: 2 } } } },
    },
    status: { ready: true, printableStatus: 'Running', conditions: [], observedGeneration: 3, weight: -1.5e-3, nothing: null },
    ...extra,
  };
}

/** A small deterministic random source (tests must be repeatable). */
function random(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0;
    return x / 2 ** 32;
  };
}

const KEYS = [
  `kubevirt.${INT}/vm`,
  'kubevirt.io/vm',
  'kubevirt.io',
  `vm.kubevirt.${INT}/name`,
  'app',
  'app.kubernetes.io/managed-by',
  'preserved-original-kubevirt.io/x',
  `cpu-feature.node.virtualization.deckhouse.io/vmx`,
  'a<b',
  'café',
];
const STRINGS = [
  'plain',
  `kubevirt.${INT}/vm`,
  'virt-operator-internal-virtualization',
  'virt-operator',
  'quote " inside',
  'back \\ slash',
  'new\nline',
  '<tag> & "x"',
  '',
  `${INT}/v1`,
  'InternalVirtualizationVirtualMachine',
];

function generate(next: () => number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const value = (depth: number): unknown => {
    const roll = next();
    if (depth > 3 || roll < 0.4) return pick<unknown>([...STRINGS, 0, -7, 3.25, 1e21, true, false, null]);
    if (roll < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, () => [pick([...KEYS, 'spec', 'name']), value(depth + 1)]));
  };
  const map = (): unknown =>
    next() < 0.1 ? value(3) : Object.fromEntries(Array.from({ length: Math.floor(next() * 5) }, () => [pick(KEYS), next() < 0.8 ? pick(STRINGS) : value(3)]));
  const typeMeta = (): Record<string, unknown> =>
    pick([
      { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine' },
      { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachineInstance' },
      { apiVersion: `cdi.${INT}/v1beta1`, kind: 'InternalVirtualizationDataVolume' },
      { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachineList' },
      { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine' },
      { apiVersion: 'v1', kind: 'Pod' },
      { apiVersion: `${INT}/v1` },
      { kind: 'InternalVirtualizationVirtualMachine', apiVersion: 7 },
    ]);
  const fieldSet = (): unknown => Object.fromEntries(pick(KEYS).length > 0 ? KEYS.filter(() => next() < 0.3).map((k) => [`f:${k}`, {}]) : []);
  const metadata: Record<string, unknown> = {};
  if (next() < 0.8) metadata.labels = map();
  if (next() < 0.7) metadata.annotations = map();
  if (next() < 0.6) metadata.finalizers = next() < 0.9 ? Array.from({ length: Math.floor(next() * 3) }, () => pick<unknown>([...KEYS, 3])) : 'not-a-list';
  if (next() < 0.5) metadata.ownerReferences = Array.from({ length: Math.floor(next() * 3) }, () => (next() < 0.9 ? { ...typeMeta(), name: 'o' } : 'x'));
  if (next() < 0.6) {
    metadata.managedFields = Array.from({ length: Math.floor(next() * 3) }, () =>
      next() < 0.9
        ? {
            apiVersion: pick([`${INT}/v1`, 'kubevirt.io/v1', 'v1', 5]),
            fieldsV1:
              next() < 0.9
                ? {
                    'f:metadata': {
                      'f:labels': fieldSet(),
                      'f:annotations': fieldSet(),
                      'f:finalizers': { [`v:${JSON.stringify(pick(KEYS))}`]: {}, 'v:broken': {} },
                    },
                  }
                : [],
          }
        : null,
    );
  }
  if (next() < 0.2) metadata['$setElementOrder/finalizers'] = [pick(KEYS)];
  return { ...typeMeta(), metadata: next() < 0.95 ? metadata : 'odd', spec: value(0), status: value(1) };
}

/**
 * The text the apiserver could send: compact or indented, with Go's escapes of <, > and &, and with
 * every slash escaped (legal JSON, so names may come escaped).
 */
function texts(doc: unknown): string[] {
  const compact = JSON.stringify(doc);
  const goEscaped = compact.replaceAll('<', '\\u003c').replaceAll('>', '\\u003e').replaceAll('&', '\\u0026');
  return [compact, JSON.stringify(doc, null, 2), `  ${goEscaped}\n`, compact.replaceAll('/', '\\/')];
}

describe('restoreObjectText', () => {
  it('restores an object of a renamed kind like the parsed path does, and leaves the rest of the text as it was', () => {
    const text = JSON.stringify(vm());
    const out = restoreObjectText(r, text);
    expect(out).toBeDefined();
    expect(JSON.parse(out ?? '')).toEqual(parsedRestore(text));
    const restored = JSON.parse(out ?? '') as ReturnType<typeof vm> & { metadata: { labels: Record<string, string> } };
    expect(restored.kind).toBe('VirtualMachine');
    expect(restored.metadata.labels).toEqual({
      'kubevirt.io/vm': 'vm-1',
      'preserved-original-kubevirt.io/vm': 'written-in-original-form',
      app: 'web',
      'vm.kubevirt.io/name': 'vm-1',
    });
    // The spec is not restored for this kind (no rule), so its text is passed on unchanged.
    expect(out).toContain(`"spec":${JSON.stringify(vm().spec)}`);
    // Numbers keep their digits (a parse and a stringify would lose them).
    const big = '{"apiVersion":"' + INT + '/v1","kind":"InternalVirtualizationVirtualMachine","spec":{"n":12345678901234567890,"f":1.50}}';
    expect(restoreObjectText(r, big)).toBe('{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","spec":{"n":12345678901234567890,"f":1.50}}');
  });

  it('agrees with the parsed path on generated objects wherever it answers, and answers for plain objects of renamed kinds', () => {
    const next = random(20261204);
    let answered = 0;
    for (let i = 0; i < 1_500; i++) {
      const doc = generate(next);
      for (const text of texts(doc)) {
        const out = restoreObjectText(r, text);
        if (out === undefined) continue;
        answered += 1;
        expect([i, JSON.parse(out)]).toEqual([i, parsedRestore(text)]);
      }
    }
    // Other kinds and lists fall back; objects of renamed kinds are answered here.
    expect(answered).toBeGreaterThan(2_000);
  });

  it('leaves lists and other kinds to the parsed path, and reads names written with escapes', () => {
    const list = { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachineList', items: [vm()] };
    expect(restoreObjectText(r, JSON.stringify(list))).toBeUndefined();
    expect(restoreObjectText(r, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { labels: { [`kubevirt.${INT}/vm`]: 'x' } } }))).toBeUndefined();
    expect(restoreObjectText(r, JSON.stringify({ ...vm(), kind: undefined }))).toBeUndefined();
    const escapedKey = JSON.stringify(vm()).replace(`"kubevirt.${INT}/vm"`, `"kubevirt.${INT}\\/vm"`);
    expect(JSON.parse(escapedKey)).toEqual(vm());
    expect(JSON.parse(restoreObjectText(r, escapedKey) ?? '')).toEqual(parsedRestore(escapedKey));
    expect(restoreObjectText(r, escapedKey)).toContain('"kubevirt.io/vm":"vm-1"');
    expect(restoreObjectText(r, '[1,2]')).toBeUndefined();
  });

  it('leaves nesting deeper than its stack to the parsed path', () => {
    const depth = 200_000;
    const text = JSON.stringify(vm()).replace('"runStrategy":"Always"', `"deep":${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(restoreObjectText(r, text)).toBeUndefined();
    const shallow = text.replace(`${'['.repeat(depth)}${']'.repeat(depth)}`, `${'['.repeat(50)}${']'.repeat(50)}`);
    expect(JSON.parse(restoreObjectText(r, shallow) ?? '')).toEqual(parsedRestore(shallow));
  });

  it('takes the last of duplicate members, as JSON.parse does', () => {
    const text = `{"kind":"Pod","apiVersion":"${INT}/v1","kind":"InternalVirtualizationVirtualMachine","metadata":{"labels":{"kubevirt.${INT}/vm":"a","kubevirt.${INT}/vm":"b"}}}`;
    const out = restoreObjectText(r, text);
    expect(JSON.parse(out ?? '')).toEqual(parsedRestore(text));
  });

  it('answers undefined for text that is not JSON, cut anywhere or broken', () => {
    const text = JSON.stringify(vm());
    for (let cut = 0; cut < text.length; cut++) expect([cut, restoreObjectText(r, text.slice(0, cut))]).toEqual([cut, undefined]);
    for (const broken of [
      text.replace('"ready":true', '"ready":tru'),
      text.replace('"observedGeneration":3', '"observedGeneration":03'),
      text.replace('"runStrategy":"Always"', '"runStrategy":"Always",'),
      text.replace('"runStrategy":"Always"', '"runStrategy" "Always"'),
      `${text} {}`,
      text.replace('{"ready"', '{ready'),
      '',
      '   ',
    ]) {
      expect(() => JSON.parse(broken) as unknown).toThrow();
      expect(restoreObjectText(r, broken)).toBeUndefined();
    }
  });
});
