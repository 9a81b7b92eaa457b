/**
 * The manifest table applied to the real apiserver with server-side dry-run: each verdict must match
 * the expectation, and the zod schemas must give the same verdict and the same defaulted spec.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { checkObject, resourceByKind } from '../../../shared/api/index.js';
import { MANIFEST_CASES, wireForm } from '../../../shared/api/testdata/manifests.js';
import { judge, type ManifestCase, type Verdict } from '../../../shared/api/testdata/table.js';
import { freshNamespace, kubectl } from '../../env/index.js';

let namespace: string;

beforeAll(async () => {
  namespace = await freshNamespace('api-table');
});

async function apiserverVerdict(c: ManifestCase): Promise<Verdict> {
  const namespaced = resourceByKind(c.manifest.kind).scope === 'Namespaced';
  const args = ['apply', '--server-side', '--dry-run=server', '--field-manager=api-table', '-o', 'json', '-f', '-'];
  const res = await kubectl(namespaced ? [...args, '-n', namespace] : args, { stdin: JSON.stringify(c.manifest) });
  return res.code === 0 ? { accepted: true, object: JSON.parse(res.stdout) as unknown } : { accepted: false, problems: res.stderr };
}

function zodVerdict(c: ManifestCase): Verdict {
  const result = checkObject(wireForm(c.manifest));
  return result.ok ? { accepted: true, object: result.value } : { accepted: false, problems: result.problems };
}

describe('the manifest table against the apiserver (server-side dry-run)', () => {
  it.each(MANIFEST_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const server = await apiserverVerdict(c);
    const zod = zodVerdict(c);
    expect({ apiserver: judge(c, server), zod: judge(c, zod) }).toEqual({ apiserver: [], zod: [] });
    expect(zod.accepted).toBe(server.accepted);
    if (server.accepted && zod.accepted) {
      // The apiserver's defaulting and the schema's defaults produce the same spec.
      expect((server.object as { spec?: unknown }).spec).toEqual((zod.object as { spec?: unknown }).spec);
    }
  });
});

describe('error reports of the apiserver', () => {
  it('name the field of an out-of-range 32-bit integer, never the path <nil>', async () => {
    const vm = MANIFEST_CASES.find((c) => c.name === 'cores beyond int32 are rejected at the cores field');
    if (vm === undefined) throw new Error('the table lost its int32 case');
    const server = await apiserverVerdict(vm);
    expect(server.accepted).toBe(false);
    const text = server.accepted || typeof server.problems !== 'string' ? '' : server.problems;
    expect(text).toContain('spec.cpu.cores: Invalid value: 2147483648');
    expect(text).not.toContain('<nil>');
  });

  it('name the field of a number that is not an integer, next to the lines at <nil> the apiserver adds itself', async () => {
    const vm = MANIFEST_CASES.find((c) => c.name === 'a fractional terminationGracePeriodSeconds is rejected at its field');
    if (vm === undefined) throw new Error('the table lost its fractional integer case');
    const server = await apiserverVerdict(vm);
    expect(server.accepted).toBe(false);
    const text = server.accepted || typeof server.problems !== 'string' ? '' : server.problems;
    expect(text).toMatch(/^\* spec\.terminationGracePeriodSeconds: Invalid value: .* in body must be of type int64/m);
    // Written down, not fixed: for any non-integer number the apiserver also reports its own type
    // check and the skipped CEL rules at <nil>, with or without `format: int64` (shared/api/README.md).
    expect(text).toMatch(/^\* <nil>: Invalid value: "": Checked value must be of type integer .* in spec\.terminationGracePeriodSeconds$/m);
  });
});
