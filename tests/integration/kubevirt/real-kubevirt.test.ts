/**
 * Real KubeVirt in the loop: our controller's internal VMs (buildInternalVM) are admitted by
 * virt-api's own webhooks through the rewriter's webhook proxy, and upstream virt-controller, through
 * the rewriter, turns them into a VMI and a virt-launcher pod, with the install's KubeVirt
 * configuration. Broken internal VMs are refused with KubeVirt's reason; without the bpfbridge
 * binding in the configuration no launcher pod is made.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { buildInternalVM } from '../../../daemons/controller/reconcilers/vm/kvvm/build.js';
import { launcherPods as controllerLauncherPods } from '../../../daemons/controller/kube/launcher.js';
import { coreEvents, makeClients } from '../../../daemons/controller/kube/resources.js';
import {
  COMPUTE_CONTAINER,
  CREATED_BY_LABEL,
  DOMAIN_ANNOTATION,
  LAUNCHER_LABEL,
  LAUNCHER_VALUE,
  VM_NAME_LABEL,
} from '../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import { KubeClient } from '../../../shared/kube/index.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { vm as vmOf, vmClass as classOf } from '../controller/builders.js';
import { INTERNAL, dropBpfBridgeBinding, kubeVirtConfig, startRealKubeVirt, type RealKubeVirt } from './real-kubevirt.js';

let kv: RealKubeVirt;
const NS = 'vms';

beforeAll(async () => {
  kv = await startRealKubeVirt('real-kubevirt');
  await kv.ok(['create', 'namespace', NS]);
}, 240_000);

afterAll(async () => {
  await kv.stop();
});

const scope = { namespace: NS, id: 'kv' };
const vmClass = classOf(scope, 'generic');

function publicVM(name: string): VirtualMachine {
  const vm = vmOf(scope, name, vmClass.metadata.name ?? '', { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: 'ubuntu' }] });
  return { ...vm, metadata: { ...vm.metadata, uid: randomUUID() } };
}

/** The internal VM our controller builds for `name` (with an address from IPAM). */
function internalVM(name: string): InternalVirtualMachine {
  return buildInternalVM({
    vm: publicVM(name),
    vmClass,
    devices: [{ kind: 'ClusterVirtualImage', name: 'ubuntu', uid: randomUUID(), source: { image: 'dvcr/cvi/ubuntu:1' }, cdrom: false }],
    ipAddress: '10.66.0.5',
    runStrategy: 'Always',
  });
}

const create = (obj: unknown): Promise<{ code: number; stdout: string; stderr: string }> =>
  kv.kubectl(['create', '-f', '-', '-o', 'json'], JSON.stringify(obj));

interface Pod {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}
async function launcherPods(vmName: string): Promise<Pod[]> {
  const out = await kv.ok(['get', 'pods', '-n', NS, '-l', `vm.${INTERNAL}/name=${vmName}`, '-o', 'json']);
  return (JSON.parse(out) as { items: Pod[] }).items;
}

describe('upstream KubeVirt v1.6.0 through the api-rewriter', () => {
  it("admits an internal VM our controller built through virt-api's webhooks, and virt-controller makes its VMI and launcher pod", async () => {
    const made = await create(internalVM('web'));
    expect(made.stderr).toBe('');
    const vm = JSON.parse(made.stdout) as InternalVirtualMachine;
    // virt-api's mutating webhook ran (through the rewriter): KubeVirt's defaults are in.
    expect(vm.spec.template.spec['architecture']).toBe('amd64');

    const vmi = await waitFor(
      'the VMI virt-controller makes',
      async () => {
        const r = await kv.kubectl(['get', `internalvirtualizationvirtualmachineinstances.${INTERNAL}`, 'web', '-n', NS, '-o', 'json']);
        return r.code === 0 ? (JSON.parse(r.stdout) as { metadata: { uid: string }; status?: { phase?: string } }) : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const [pod] = await waitFor(
      'the launcher pod virt-controller makes',
      async () => {
        const pods = await launcherPods('web');
        return pods.length > 0 ? pods : undefined;
      },
      { timeoutMs: 60_000 },
    );
    // The names shared/api/internal/launcher.ts gives our controller, audit, subresources and simulator.
    expect(pod?.metadata.labels).toMatchObject({ [LAUNCHER_LABEL]: LAUNCHER_VALUE, [CREATED_BY_LABEL]: vmi.metadata.uid, [VM_NAME_LABEL]: 'web' });
    // The domain name is an annotation (renamed like every kubevirt.io key), not a label.
    expect(pod?.metadata.annotations?.[DOMAIN_ANNOTATION]).toBe('web');
    expect(Object.keys(pod?.metadata.labels ?? {}).filter((k) => k.endsWith('/domain'))).toEqual([]);
    // Cilium gives the guest the address IPAM chose: the template annotation reaches the pod.
    expect(pod?.metadata.annotations?.['cni.cilium.io/ipAddress']).toBe('10.66.0.5');
    expect(kv.controllerLog()).not.toMatch(/couldn't find configuration for network bindining/);

    // Our controller finds this pod to read how the guest ended (as the kubelet would report it).
    // A finalizer holds the pod: once its VMI has ended, virt-controller may replace the VMI, and the
    // garbage collector would delete this pod before it is read (a race seen under load).
    await kv.ok([
      'patch',
      'pod',
      pod?.metadata.name ?? '',
      '-n',
      NS,
      '--type=merge',
      '-p',
      JSON.stringify({ metadata: { finalizers: ['test.virtualization.deckhouse.io/hold'] } }),
    ]);
    const guestShutdown = '{"event":"guest-shutdown","reason":"guest OS powered off"}';
    await kv.ok([
      'patch',
      'pod',
      pod?.metadata.name ?? '',
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          containerStatuses: [
            {
              name: COMPUTE_CONTAINER,
              image: 'virt-launcher',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 0, message: guestShutdown } },
            },
          ],
        },
      }),
    ]);
    const kube = new KubeClient(kv.apiserver.kubeConfig());
    const pods = makeClients(kube).pods;
    const fullVmi = { metadata: { name: 'web', namespace: NS, uid: vmi.metadata.uid }, spec: { domain: {} } } as InternalVirtualMachineInstance;
    expect(await controllerLauncherPods(pods, coreEvents(kube)).guestEvent(fullVmi, new AbortController().signal)).toBe('guest-shutdown');
  });

  it.each([
    [
      'a disk without a volume',
      (vm: InternalVirtualMachine) => vm.spec.template.spec.volumes?.splice(0),
      "spec.template.spec.domain.devices.disks[0].Name 'cvi-ubuntu' not found",
    ],
    [
      'an interface without a network',
      (vm: InternalVirtualMachine) => vm.spec.template.spec.networks?.splice(0),
      "spec.template.spec.domain.devices.interfaces[0].name 'default' not found",
    ],
    [
      'a machine type outside the emulated machines allowed',
      (vm: InternalVirtualMachine) => (vm.spec.template.spec.domain.machine = { type: 'virt' }),
      'spec.template.spec.domain.machine.type is not supported: virt (allowed values: [q35* pc-q35* pc pc-i440fx*])',
    ],
  ])("refuses an internal VM with %s, with KubeVirt's reason", async (_what, breakIt, reason) => {
    const vm = internalVM(`broken-${Math.random().toString(36).slice(2, 7)}`);
    breakIt(vm);
    const res = await create(vm);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(reason);
  });

  it('makes no launcher pod when the configuration lacks the bpfbridge binding, and says why', async () => {
    const config = kubeVirtConfig();
    const network = config.spec.configuration['network'] as { binding: Record<string, unknown> };
    expect(Object.keys(network.binding)).toContain('bpfbridge');
    await dropBpfBridgeBinding(kv, 60_000);

    const made = await create(internalVM('nobinding'));
    expect(made.stderr).toBe('');
    await waitFor(
      'virt-controller to refuse rendering the launcher pod',
      () => kv.controllerLog().includes("couldn't find configuration for network bindining: bpfbridge"),
      {
        timeoutMs: 60_000,
      },
    );
    // virt-controller says why on the VMI: its Synchronized condition (a render failure makes no event).
    const condition = await waitFor('the VMI to say why it has no pod', async () => {
      const out = await kv.ok(['get', `internalvirtualizationvirtualmachineinstances.${INTERNAL}`, 'nobinding', '-n', NS, '-o', 'json']);
      const vmi = JSON.parse(out) as { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } };
      return vmi.status?.conditions?.find((c) => c.type === 'Synchronized' && c.status === 'False');
    });
    expect(condition).toMatchObject({ reason: 'FailedCreate', message: expect.stringContaining('network bindining: bpfbridge') as unknown });
    expect(await launcherPods('nobinding')).toEqual([]);
  });
});
