/** The generated CRDs as the apiserver serves them: established, explained, printed. */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ALL_RESOURCES, DEFAULT_CLASS_ANNOTATION } from '../../../shared/api/index.js';
import { FULL_VMS } from '../../../shared/api/testdata/full-vm.js';
import { freshNamespace, kubectl } from '../../env/index.js';

let namespace: string;

beforeAll(async () => {
  namespace = await freshNamespace('api-crds');
});

async function ok(args: string[], stdin?: string): Promise<string> {
  const res = await kubectl(args, stdin === undefined ? undefined : { stdin });
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${res.stderr}`);
  return res.stdout;
}

/** The rows of `kubectl get` as header -> value maps (columns split on runs of 2+ spaces). */
function table(text: string): Record<string, string>[] {
  const [header = '', ...rows] = text.trimEnd().split('\n');
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index }));
  return rows.map((row) => Object.fromEntries(starts.map((c, i) => [c.name, row.slice(c.at, starts[i + 1]?.at ?? row.length).trim()])));
}

describe('the CRDs in the apiserver', () => {
  it('are all established and structural', async () => {
    const crds = JSON.parse(await ok(['get', 'crd', '-o', 'json'])) as {
      items: { metadata: { name: string }; status: { conditions: { type: string; status: string }[] } }[];
    };
    for (const def of ALL_RESOURCES) {
      const crd = crds.items.find((c) => c.metadata.name === `${def.plural}.${def.group}`);
      const conditions = Object.fromEntries((crd?.status.conditions ?? []).map((c) => [c.type, c.status]));
      expect({ kind: def.kind, ...conditions }).toMatchObject({ kind: def.kind, Established: 'True', NamesAccepted: 'True' });
      expect(conditions['NonStructuralSchema']).toBeUndefined();
    }
  });

  it('explain virtualmachine.spec.runPolicy with its description and values', async () => {
    const out = await ok(['explain', 'virtualmachine.spec.runPolicy']);
    expect(out).toContain('FIELD: runPolicy <string>');
    expect(out).toMatch(/Power policy\./);
    expect(out).toContain('AlwaysOnUnlessStoppedManually');
  });

  it('explain fields of the other kinds by their short names', async () => {
    for (const [field, text] of [
      ['vd.spec.dataSource.type', 'Where the data comes from'],
      ['vmop.spec.type', 'The operation to perform'],
      ['vmclass.spec.cpu', 'cannot be changed after creation'],
      ['vmpool.spec.scaleDownPolicy', 'scale-down'],
    ] as const) {
      expect(await ok(['explain', field])).toContain(text);
    }
  });
});

describe('kubectl get', () => {
  it('shows the VirtualMachine printer columns, the wide ones with -o wide', async () => {
    const vm = FULL_VMS[0];
    const created = JSON.parse(await ok(['create', '-o', 'json', '-n', namespace, '-f', '-'], JSON.stringify({ ...vm, status: undefined }))) as Record<
      string,
      unknown
    >;
    const status = {
      ...vm.status,
      conditions: vm.status.conditions.map((c) => ({ ...c, type: c.type === 'Running' ? 'AwaitingRestartToApplyConfiguration' : c.type })),
    };
    await ok(['replace', '--subresource=status', '-n', namespace, '-f', '-'], JSON.stringify({ ...created, status }));

    const [row] = table(await ok(['get', 'vm', vm.metadata.name, '-n', namespace]));
    expect(Object.keys(row)).toEqual(['NAME', 'PHASE', 'UPTIME', 'NODE', 'IPADDRESS', 'AGE']);
    expect(row).toMatchObject({ NAME: 'web', PHASE: 'Running', NODE: 'node-1', IPADDRESS: '10.66.10.5' });

    const [wide] = table(await ok(['get', 'vm', vm.metadata.name, '-n', namespace, '-o', 'wide']));
    expect(wide).toMatchObject({ CORES: '4', COREFRACTION: '50%', MEMORY: '8Gi', 'NEED RESTART': 'True', AGENT: 'True' });
  });

  it('lists VMs under the virtualization and all categories', async () => {
    const ns = await freshNamespace('api-categories');
    const vm = { ...FULL_VMS[0], metadata: { name: 'listed' }, status: undefined };
    await ok(['create', '-n', ns, '-f', '-'], JSON.stringify(vm));
    const listed = 'virtualmachine.virtualization.deckhouse.io/listed';
    expect((await ok(['get', 'virtualization', '-n', ns, '-o', 'name'])).split('\n')).toContain(listed);
    expect((await ok(['get', 'all', '-n', ns, '-o', 'name'])).split('\n')).toContain(listed);
  });

  it('shows the default class mark from its annotation', async () => {
    const klass = {
      apiVersion: 'virtualization.deckhouse.io/v1alpha2',
      kind: 'VirtualMachineClass',
      metadata: { name: `default-${namespace}`, annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
      spec: { cpu: { type: 'Host' } },
    };
    await ok(['create', '-f', '-'], JSON.stringify(klass));
    const [row] = table(await ok(['get', 'vmclass', klass.metadata.name]));
    expect(row).toMatchObject({ NAME: klass.metadata.name, ISDEFAULT: 'true' });
  });
});
