/**
 * System test: a real kube-apiserver calls the admission function over HTTPS (caBundle from a test
 * CA) through the install's own webhook configurations, and kubectl shows what it decided.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Finalizer } from '../../../shared/api/finalizers.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { startAdmissionCluster, type AdmissionCluster } from './cluster.js';
import { TEST_LABEL, installWebhooks } from './configurations.js';

let cluster: AdmissionCluster;
let configurations: string[] = [];
let ns = '';

const label = (): string => `{${TEST_LABEL}: "${cluster.id}"}`;

function vmYaml(name: string, spec: string): string {
  return `apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachine
metadata: {name: ${name}, namespace: ${ns}}
spec:
  cpu: {cores: 2}
  memory: {size: 2Gi}
${spec}`;
}

function moduleConfigYaml(cidrs: string[]): string {
  return `apiVersion: deckhouse.io/v1alpha1
kind: ModuleConfig
metadata: {name: virtualization, labels: ${label()}}
spec:
  enabled: true
  version: 1
  settings:
    dvcr: {storage: {type: PersistentVolumeClaim, persistentVolumeClaim: {size: 50Gi}}}
    virtualMachineCIDRs: [${cidrs.join(', ')}]
`;
}

const apply = (yaml: string, dryRun = false): ReturnType<AdmissionCluster['kubectl']> =>
  cluster.kubectl(['apply', ...(dryRun ? ['--dry-run=server'] : []), '-f', '-'], yaml);

/** The apiserver picks new webhook configurations up asynchronously: wait until ours answers. */
async function untilWebhooksActive(): Promise<void> {
  const probe = vmYaml('probe', '  virtualMachineClassName: generic\n  blockDeviceRefs: [{kind: VirtualDisk, name: a}, {kind: VirtualDisk, name: a}]\n');
  await waitFor('the webhook configurations to take effect', async () => (await apply(probe, true)).stderr.includes('denied the request'));
}

beforeAll(async () => {
  cluster = await startAdmissionCluster();
  ns = `adm-${cluster.id}`;
  await cluster.ok(['create', 'namespace', ns]);
  await cluster.ok(['label', 'namespace', ns, `${TEST_LABEL}=${cluster.id}`]);
  configurations = await installWebhooks(cluster);
  await cluster.ok(['apply', '-f', '-'], moduleConfigYaml(['10.66.0.0/16', '10.77.0.0/16']));
  await cluster.ok(
    ['apply', '-f', '-'],
    `apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineClass
metadata:
  name: generic
  labels: ${label()}
  annotations: {virtualmachineclass.virtualization.deckhouse.io/is-default-class: "true"}
spec:
  cpu: {type: Model, model: Nehalem}
  sizingPolicies:
  - {cores: {min: 1, max: 4}, coreFractions: [10, 50, 100], defaultCoreFraction: 10}
  - {cores: {min: 5, max: 16}, coreFractions: [50, 100]}
`,
  );
  await untilWebhooksActive();
}, 180_000);

afterAll(async () => {
  if (configurations.length > 0) await cluster.kubectl(['delete', '--ignore-not-found', ...configurations]);
  await cluster?.stop();
}, 60_000);

describe('admission webhooks called by the real apiserver', () => {
  it('refuses kubectl apply of a bad VirtualMachine, listing every violation with its path', async () => {
    const res = await apply(
      vmYaml(
        'bad',
        '  virtualMachineClassName: generic\n  blockDeviceRefs: [{kind: VirtualDisk, name: root, bootOrder: 1}, {kind: VirtualDisk, name: root, bootOrder: 1}]\n',
      ),
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      'admission webhook "vm.virtualization-controller.validate.d8-virtualization" denied the request: ' +
        'spec.blockDeviceRefs[1]: VirtualDisk/root is already listed at spec.blockDeviceRefs[0]; ' +
        'spec.blockDeviceRefs[1].bootOrder: boot order 1 is already used by spec.blockDeviceRefs[0]',
    );
  });

  it('applies a good VirtualMachine with the default class, core fraction and network id filled in', async () => {
    const res = await apply(vmYaml('good', '  blockDeviceRefs: [{kind: VirtualDisk, name: root}]\n  networks: [{type: Main}]\n'));
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const vm = JSON.parse(await cluster.ok(['-n', ns, 'get', 'virtualmachine', 'good', '-o', 'json'])) as {
      spec: { virtualMachineClassName: string; cpu: { coreFraction: string }; networks: Array<{ id: number }> };
    };
    expect(vm.spec.virtualMachineClassName).toBe('generic');
    expect(vm.spec.cpu.coreFraction).toBe('10%');
    expect(vm.spec.networks).toEqual([{ type: 'Main', id: 1 }]);
  });

  it("creates a VirtualMachine already carrying the controller's vm-cleanup finalizer, next to the user's own", async () => {
    const res = await apply(
      vmYaml('finalized', '  virtualMachineClassName: generic\n  blockDeviceRefs: [{kind: VirtualDisk, name: root}]\n').replace(
        `namespace: ${ns}}`,
        `namespace: ${ns}, finalizers: [example.com/keep]}`,
      ),
    );
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const get = async (): Promise<{ metadata: { finalizers?: string[]; resourceVersion: string } }> =>
      JSON.parse(await cluster.ok(['-n', ns, 'get', 'virtualmachine', 'finalized', '-o', 'json'])) as {
        metadata: { finalizers?: string[]; resourceVersion: string };
      };
    const created = await get();
    expect(created.metadata.finalizers).toEqual(['example.com/keep', Finalizer.vmCleanup]);
    // An update that drops it does not get it back from the webhook (the controller restores it).
    await cluster.ok(['-n', ns, 'patch', 'virtualmachine', 'finalized', '--type=merge', '-p', '{"metadata":{"finalizers":["example.com/keep"]}}']);
    expect((await get()).metadata.finalizers).toEqual(['example.com/keep']);
    // Let it go: no controller runs in this cluster.
    await cluster.ok(['-n', ns, 'patch', 'virtualmachine', 'finalized', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  });

  it('passes warnings through to kubectl without refusing', async () => {
    const res = await apply(vmYaml('legacy', '  virtualMachineClassName: generic\n  osType: Legacy\n  blockDeviceRefs: [{kind: VirtualDisk, name: root}]\n'));
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('Warning: spec.enableParavirtualization: osType Legacy with enableParavirtualization=true needs virtio drivers in the guest');
  });

  it('refuses to shrink a provisioned VirtualDisk', async () => {
    const disk = (size: string): string =>
      `apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualDisk\nmetadata: {name: data, namespace: ${ns}}\nspec: {persistentVolumeClaim: {size: ${size}}}\n`;
    await cluster.ok(['apply', '-f', '-'], disk('10Gi'));
    await cluster.ok([
      '-n',
      ns,
      'patch',
      'virtualdisk',
      'data',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Ready","capacity":"10Gi"}}',
    ]);
    const res = await apply(disk('5Gi'));
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      'admission webhook "vd.virtualization-controller.validate.d8-virtualization" denied the request: ' +
        'spec.persistentVolumeClaim.size: cannot be decreased (from 10Gi to 5Gi) once the disk is provisioned',
    );
    expect(await apply(disk('20Gi'))).toMatchObject({ code: 0 });
  });

  it('refuses to remove a ModuleConfig CIDR while a lease uses it, and allows it once the lease is gone', async () => {
    await cluster.ok(
      ['apply', '-f', '-'],
      `apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineIPAddressLease
metadata: {name: ip-10-77-0-5, labels: ${label()}}
spec: {virtualMachineIPAddressRef: {name: vm-ip, namespace: ${ns}}}
`,
    );
    const refused = await apply(moduleConfigYaml(['10.66.0.0/16']));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'admission webhook "moduleconfig.virtualization-controller.validate.d8-virtualization" denied the request: ' +
        'spec.settings.virtualMachineCIDRs: cannot remove 10.77.0.0/16: 1 address lease(s) still use it (ip-10-77-0-5)',
    );
    await cluster.ok(['delete', 'virtualmachineipaddresslease', 'ip-10-77-0-5']);
    expect(await apply(moduleConfigYaml(['10.66.0.0/16']))).toMatchObject({ code: 0 });
  });

  it('creates bare address and lease objects (no spec) through the webhooks, as the original does, with spec defaulted', async () => {
    const created = await apply(`apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineIPAddress
metadata: {name: bare-ip, namespace: ${ns}}
---
apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineMACAddress
metadata: {name: bare-mac, namespace: ${ns}}
---
apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineIPAddressLease
metadata: {name: ip-10-66-0-9, labels: ${label()}}
`);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const specOf = async (args: string[]): Promise<unknown> => (JSON.parse(await cluster.ok(['get', ...args, '-o', 'json'])) as { spec?: unknown }).spec;
    expect(await specOf(['-n', ns, 'virtualmachineipaddress', 'bare-ip'])).toEqual({ type: 'Auto' });
    expect(await specOf(['-n', ns, 'virtualmachinemacaddress', 'bare-mac'])).toEqual({});
    expect(await specOf(['virtualmachineipaddresslease', 'ip-10-66-0-9'])).toEqual({});
    await cluster.ok(['delete', 'virtualmachineipaddresslease', 'ip-10-66-0-9']);
  });

  it('refuses a lease whose name does not encode an address', async () => {
    const res = await apply(`apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineIPAddressLease
metadata: {name: ip-10-77-0-500, labels: ${label()}}
spec: {virtualMachineIPAddressRef: {name: vm-ip, namespace: ${ns}}}
`);
    expect(res.stderr).toContain('metadata.name: ip-10-77-0-500 does not encode an IPv4 address');
  });
});
