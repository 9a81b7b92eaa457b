import { describe, expect, it } from '@jest/globals';
import { Finalizer } from '../../../shared/api/finalizers.js';
import { vm, vmop } from './builders.js';
import { eventually, gone, useCluster } from './fixtures.js';
import { startStoryWorld } from './story-world.js';

const t = useCluster();

describe('the full story of a virtual machine', () => {
  it('builds the internal VM, runs it with an IP, restarts it by operation and cleans up on deletion', async () => {
    const { scope, ns, nodeName, className, kubevirt } = await startStoryWorld(t, {
      prefix: 'ctl-story',
      env: { VIRTUAL_MACHINE_CIDRS: '10.201.0.0/24', VIRTUAL_MACHINE_IP_LEASES_RETENTION_DURATION: '0s' },
    });

    const readyClass = await eventually(async () => {
      const got = await t.c.classes.get({ name: className });
      return got.status?.phase === 'Ready' && got;
    }, 'class Ready');
    expect(readyClass.status?.availableNodes).toEqual([nodeName]);

    await t.c.vms.create(
      vm(scope, 'web', className, {
        blockDeviceRefs: [
          { kind: 'VirtualImage', name: 'ubuntu' },
          { kind: 'VirtualDisk', name: 'data' },
        ],
      }),
    );
    const kvvm = await eventually(() => t.c.kvvms.get({ namespace: ns, name: 'web' }), 'internal VM created');
    const lease = (await t.c.leases.list()).items.find((l) => l.spec.virtualMachineIPAddressRef?.namespace === ns);
    expect(lease?.metadata.name).toMatch(/^ip-10-201-0-\d+$/);
    const ip = lease?.metadata.name?.replace('ip-', '').replaceAll('-', '.');
    const tpl = kvvm.spec.template;
    expect(kvvm.spec.runStrategy).toBe('Always');
    expect(kvvm.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'VirtualMachine', name: 'web', controller: true });
    expect(tpl.metadata?.annotations?.['cni.cilium.io/ipAddress']).toBe(ip);
    expect(tpl.spec.domain.cpu).toMatchObject({ sockets: 1, cores: 2, model: 'Nehalem' });
    expect(tpl.spec.domain.memory).toEqual({ guest: '2Gi' });
    expect(tpl.spec.domain.resources).toEqual({ requests: { cpu: '1', memory: '2Gi' }, limits: { cpu: '2', memory: '2Gi' } });
    expect(tpl.spec.domain.devices?.disks?.map((d) => [d.name, d.bootOrder])).toEqual([
      ['vi-ubuntu', 1],
      ['vd-data', 2],
    ]);
    expect(tpl.spec.volumes).toEqual([
      { name: 'vi-ubuntu', containerDisk: { image: `dvcr.d8-virtualization.svc/vi/${ns}/ubuntu:1` } },
      { name: 'vd-data', persistentVolumeClaim: { claimName: 'vd-data-pvc' } },
    ]);
    expect(tpl.spec.nodeSelector).toEqual(readyClass.spec.nodeSelector?.matchLabels);

    // KubeVirt (started only now, so the first shape is seen as built) starts the instance for
    // runStrategy Always, then it runs on the node.
    await kubevirt.start();
    await eventually(async () => (await t.c.vms.get({ namespace: ns, name: 'web' })).status?.phase === 'Starting', 'VM Starting');
    await kubevirt.run('web', nodeName);
    const running = await eventually(async () => {
      const got = await t.c.vms.get({ namespace: ns, name: 'web' });
      return got.status?.phase === 'Running' && got;
    }, 'VM Running');
    expect(running.status).toMatchObject({ nodeName, ipAddress: ip, virtualMachineIPAddressName: expect.stringMatching(/^web-/) });
    expect(running.metadata.finalizers).toContain(Finalizer.vmCleanup);
    await eventually(
      async () => (await t.c.kvvms.get({ namespace: ns, name: 'web' })).spec.runStrategy === 'Manual',
      'runStrategy Manual after the first start',
    );
    const vmip = await t.c.vmips.get({ namespace: ns, name: running.status?.virtualMachineIPAddressName ?? '' });
    await eventually(async () => (await t.c.vmips.get({ namespace: ns, name: vmip.metadata.name ?? '' })).status?.phase === 'Attached', 'address Attached');

    // Restart by operation: a new instance replaces the old one.
    const first = await t.c.kvvmis.get({ namespace: ns, name: 'web' });
    await t.c.vmops.create(vmop(scope, 'restart-1', 'web', 'Restart'));
    const second = await eventually(async () => {
      const got = await t.c.kvvmis.get({ namespace: ns, name: 'web' });
      return got.metadata.uid !== first.metadata.uid && got;
    }, 'a new instance');
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    await kubevirt.run('web', nodeName);
    await eventually(async () => (await t.c.vmops.get({ namespace: ns, name: 'restart-1' })).status?.phase === 'Completed', 'restart Completed');
    expect(kubevirt.created.get('web')).toBe(2);

    // Deletion removes the instance, the internal VM, the address and its lease, then the VM.
    await t.c.vms.delete({ namespace: ns, name: 'web' });
    await eventually(() => gone(() => t.c.vms.get({ namespace: ns, name: 'web' })), 'VM gone');
    expect(await gone(() => t.c.kvvms.get({ namespace: ns, name: 'web' }))).toBe(true);
    expect(await gone(() => t.c.kvvmis.get({ namespace: ns, name: 'web' }))).toBe(true);
    await eventually(() => gone(() => t.c.vmips.get({ namespace: ns, name: vmip.metadata.name ?? '' })), 'address gone');
    await eventually(() => gone(() => t.c.leases.get({ name: lease?.metadata.name ?? '' })), 'lease gone');
  });
});
