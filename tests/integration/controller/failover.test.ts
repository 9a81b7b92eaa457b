import { afterEach, describe, expect, it } from '@jest/globals';
import { leaseDescriptor, leaseSchema } from '../../../shared/kube/index.js';
import { VM_UID_LABEL } from '../../../daemons/controller/reconcilers/vm/handlers/ipam.js';
import { VMIP_UID_LABEL } from '../../../daemons/controller/reconcilers/ipam/allocate.js';
import { freshNamespace } from '../../env/index.js';
import { completedCreates, countBy, successfulCreates, type AuditEvent } from './audit.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { clusterImage, makeClusterImageReady, node, vm, vmClass } from './builders.js';
import { SCOPE_LABEL, TEST_FIELD_MANAGER, eventually, newScope, useCluster } from './fixtures.js';
import { spawnController, type ControllerProcess } from './process.js';

const t = useCluster();
const procs: ControllerProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.child.kill('SIGTERM');
    await p.exited;
  }
});

const VMS = 60;
const KILL_AFTER = 20;
const LEASE = 'controller-failover';

describe('two controller replicas', () => {
  it('the standby takes over when the leader is killed during a burst, converging every VM and creating nothing twice', async () => {
    const scope = newScope(await freshNamespace('ctl-failover'));
    const ns = scope.namespace;
    const nodeObj = await t.c.nodes.create(node(scope, 'node-f'));
    t.onCleanup(() => t.c.nodes.delete({ name: nodeObj.metadata.name ?? '' }));
    const cls = await t.c.classes.create(vmClass(scope, 'failover'));
    const cvi = await t.c.clusterImages.create(clusterImage(scope, 'alpine'));
    await makeClusterImageReady(t.c, cvi.metadata.name ?? '');

    const env = {
      POD_NAMESPACE: ns,
      LEADER_ELECTION_LEASE_NAME: LEASE,
      // client-go's defaults. Tighter ones (2 s / 1.5 s) made the new leader miss its renew deadline
      // when the apiserver answered slowly on a busy 2-core machine; it then exits as it must (its
      // Deployment would restart it), and with the old leader killed nothing converged the rest.
      LEADER_ELECTION_LEASE_DURATION: '15s',
      LEADER_ELECTION_RENEW_DEADLINE: '10s',
      LEADER_ELECTION_RETRY_PERIOD: '2s',
      WATCH_NAMESPACE: ns,
      CLUSTER_OBJECTS_SELECTOR: `${SCOPE_LABEL}=${scope.id}`,
      MODULE_CONFIG_WATCH: 'false',
      VIRTUAL_MACHINE_CIDRS: '10.202.0.0/24',
    };
    procs.push(spawnController('replica-a', env), spawnController('replica-b', env));
    const leases = t.kube.resource(leaseDescriptor, leaseSchema, TEST_FIELD_MANAGER);
    const holder = async (): Promise<string> => (await leases.get({ namespace: ns, name: LEASE })).spec?.holderIdentity ?? '';
    const firstHolder = await eventually(async () => (await holder()) || undefined, 'a leader', 90_000);
    const leader = procs.find((p) => firstHolder.startsWith(`${p.name}-`));
    const standby = procs.find((p) => p !== leader);
    expect(leader).toBeDefined();
    await leader?.waitForLog((r) => r['msg'] === 'caches synced, reconcilers running', 90_000);

    const names = Array.from({ length: VMS }, (_, i) => `vm-${String(i).padStart(3, '0')}`);
    const spec = { runPolicy: 'Manual' as const, blockDeviceRefs: [{ kind: 'ClusterVirtualImage' as const, name: cvi.metadata.name ?? '' }] };
    for (let i = 0; i < names.length; i += 5) {
      if (i === KILL_AFTER) leader?.kill();
      await Promise.all(names.slice(i, i + 5).map((name) => t.c.vms.create(vm(scope, name, cls.metadata.name ?? '', spec))));
    }
    expect((await leader?.exited)?.signal).toBe('SIGKILL');

    const newHolder = await eventually(
      async () => {
        const h = await holder();
        return h !== firstHolder && h !== '' && h;
      },
      'the standby leads',
      90_000,
    );
    expect(newHolder.startsWith(`${standby?.name ?? '?'}-`)).toBe(true);

    // Every VM converges: internal VM, address, status.
    await eventually(
      async () => {
        const list = (await t.c.vms.list({ namespace: ns })).items;
        const behind = list.filter((v) => v.status?.phase !== 'Stopped' || v.status.ipAddress === undefined);
        if (list.length === VMS && behind.length === 0) return true;
        // Thrown, so that a timeout names what was still behind (the wait reports the last error).
        const shown = behind.slice(0, 5).map((v) => `${v.metadata.name ?? ''}: ${v.status?.phase ?? 'no phase'}, ip ${v.status?.ipAddress ?? 'none'}`);
        // And what the standby said last: its warnings and errors, else its last lines.
        const logs = standby?.logs ?? [];
        const warnings = logs.filter((r) => typeof r['level'] === 'number' && r['level'] >= 40);
        const said = (warnings.length > 0 ? warnings : logs).slice(-5).map((r) => JSON.stringify(r).slice(0, 400));
        throw new Error(
          `${String(list.length)} of ${String(VMS)} VMs, ${String(behind.length)} behind (${shown.join('; ')}); standby's last ${warnings.length > 0 ? 'warnings' : 'lines'}: ${said.join(' | ') || 'none'}`,
        );
      },
      'every VM Stopped with an IP',
      // 60 VMs converge in seconds on a quiet machine; the deadline only turns a hang into a failure on a busy 2-core one.
      240_000,
    );
    const kvvms = (await t.c.kvvms.list({ namespace: ns })).items;
    expect(kvvms.map((k) => k.metadata.name).sort()).toEqual(names);

    // Nothing twice: one address per VM, one lease per address, each object created once.
    const vmips = (await t.c.vmips.list({ namespace: ns })).items;
    expect([...countBy(vmips.map((ip) => ip.metadata.labels?.[VM_UID_LABEL] ?? '')).values()].every((n) => n === 1)).toBe(true);
    expect(vmips).toHaveLength(VMS);
    const leasesOfNs = (await t.c.leases.list()).items.filter((l) => l.spec.virtualMachineIPAddressRef?.namespace === ns);
    expect(leasesOfNs).toHaveLength(VMS);
    expect(new Set(leasesOfNs.map((l) => l.metadata.labels?.[VMIP_UID_LABEL])).size).toBe(VMS);
    // The audit log is written after each response: wait until it holds a completed create of every
    // object above, then check that nothing was created more than once. The killed leader's last
    // create may be stored and yet answered with an error (its client was gone), so the wait counts
    // every completed create of an object that exists, and the check counts the successful ones.
    const inNs = (resource: string) => (e: AuditEvent) =>
      resource === 'virtualmachineipaddressleases'
        ? (e.requestObject?.spec?.['virtualMachineIPAddressRef'] as { namespace?: string } | undefined)?.namespace === ns
        : e.objectRef?.namespace === ns;
    const nameOf = (e: AuditEvent): string => e.objectRef?.name ?? e.requestObject?.metadata?.name ?? '';
    const existing: Record<string, string[]> = {
      internalvirtualizationvirtualmachines: names,
      virtualmachineipaddresses: vmips.map((ip) => ip.metadata.name ?? ''),
      virtualmachineipaddressleases: leasesOfNs.map((l) => l.metadata.name ?? ''),
    };
    for (const [resource, objects] of Object.entries(existing)) {
      await waitFor(
        `a completed create of each of the ${VMS} ${resource} in the audit log`,
        async () => {
          const logged = new Set((await completedCreates(resource)).filter(inNs(resource)).map(nameOf));
          return objects.every((name) => logged.has(name));
        },
        { timeoutMs: 90_000 },
      );
      const created = (await successfulCreates(resource)).filter(inNs(resource));
      expect([...countBy(created.map(nameOf)).values()].filter((n) => n > 1)).toEqual([]);
      expect(created.every((e) => objects.includes(nameOf(e)))).toBe(true);
    }

    process.stdout.write(`[controller] failover: ${firstHolder} killed after ${KILL_AFTER} of ${VMS} VMs; ${newHolder} converged all\n`);
  }, 420_000);
});
