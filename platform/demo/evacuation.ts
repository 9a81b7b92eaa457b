/**
 * Two demo steps on what the original does without being asked:
 * - evacuation: the demo VM's launcher pod is evicted as `kubectl drain` does; KubeVirt's interceptor
 *   (the simulator's) refuses it with 429 and marks the instance, the VM shows EvictionRequired, the
 *   controller's `evacuation-*` Evict operation migrates the VM to the other node;
 * - a superseded operation: a Start of a VM no node can take stays InProgress; a Stop of the same VM
 *   supersedes it (phase Superseded) and the VM is Stopped again.
 * Both operations show in the live view's OPERATIONS list.
 */
import { API_VERSION } from '../../shared/api/resources/common.js';
import { KubeApiError } from '../../shared/errors/index.js';
import type { KubeClient } from '../../shared/kube/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import type { Kubectl } from '../install.js';
import { DEMO_CLASS, DEMO_NAMESPACE, DEMO_VM, OPERATOR } from './objects.js';

export const DEMO_PINNED_VM = 'demo-pinned';
const GROUP = '/apis/virtualization.deckhouse.io/v1alpha2';
const WAIT = { timeoutMs: 180_000, intervalMs: 200 };
const yaml = (o: unknown): string => JSON.stringify(o);

interface Deps {
  admin: KubeClient;
  operator: Kubectl;
  say(line: string): void;
}

interface Obj {
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
  status?: { phase?: string; nodeName?: string; virtualMachinePods?: { name: string; active?: boolean }[]; conditions?: { type: string; status: string }[] };
}

const get = async (admin: KubeClient, path: string, what: string): Promise<Obj> => (await admin.rest.request({ method: 'GET', path, what })) as Obj;
const vmOf = (admin: KubeClient, name: string): Promise<Obj> => get(admin, `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachines/${name}`, `get VM ${name}`);
const opOf = (admin: KubeClient, name: string): Promise<Obj> =>
  get(admin, `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachineoperations/${name}`, `get operation ${name}`);

/** The demo VM's launcher pod evicted as a drain does: refused, then the VM evacuated by an Evict operation. */
export async function evacuationDemo(d: Deps): Promise<void> {
  const before = await vmOf(d.admin, DEMO_VM);
  const pod = before.status?.virtualMachinePods?.find((p) => p.active === true)?.name;
  if (pod === undefined) throw new Error(`${DEMO_VM} has no active launcher pod to evict`);
  d.say(`▶ admin: evict ${DEMO_VM}'s launcher pod ${pod} on ${before.status?.nodeName ?? '?'} (what kubectl drain does)`);
  let refusal = '';
  try {
    await d.admin.rest.request({
      method: 'POST',
      path: `/api/v1/namespaces/${DEMO_NAMESPACE}/pods/${pod}/eviction`,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: DEMO_NAMESPACE } },
      what: `evict pod ${pod}`,
    });
  } catch (err: unknown) {
    if (!(err instanceof KubeApiError) || err.status !== 429) throw err;
    refusal = err.serverMessage ?? err.message;
  }
  if (!refusal.includes('Eviction triggered evacuation'))
    throw new Error(`the eviction of ${pod} was not refused by the interceptor: ${refusal || 'it was allowed'}`);
  d.say(`✓ refused (429): ${refusal}`);
  await waitFor('EvictionRequired on the VM', async () => (await vmOf(d.admin, DEMO_VM)).status?.conditions?.some((c) => c.type === 'EvictionRequired'), WAIT);
  d.say(`✓ ${DEMO_VM} shows EvictionRequired; the controller creates an Evict operation`);
  const list = async (): Promise<Obj[]> =>
    (
      (await d.admin.rest.request({ method: 'GET', path: `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachineoperations`, what: 'list operations' })) as {
        items: Obj[];
      }
    ).items;
  const op = await waitFor(
    'the evacuation operation Completed',
    async () => (await list()).find((o) => o.spec?.['type'] === 'Evict' && o.metadata.name.startsWith('evacuation-') && o.status?.phase === 'Completed'),
    WAIT,
  );
  const after = await waitFor(
    'the VM on another node without EvictionRequired',
    async () => {
      const v = await vmOf(d.admin, DEMO_VM);
      const done =
        v.status?.phase === 'Running' && v.status.nodeName !== before.status?.nodeName && !v.status.conditions?.some((c) => c.type === 'EvictionRequired');
      return done && v;
    },
    WAIT,
  );
  d.say(`✓ evacuated by ${op.metadata.name} (Evict): ${before.status?.nodeName ?? '?'} → ${after.status?.nodeName ?? '?'}, EvictionRequired gone`);
}

/** A VM no node may take (a node selector nothing matches), with its own blank disk. */
function pinnedObjects(): object[] {
  return [
    {
      apiVersion: API_VERSION,
      kind: 'VirtualDisk',
      metadata: { name: `${DEMO_PINNED_VM}-root`, namespace: DEMO_NAMESPACE },
      spec: { persistentVolumeClaim: { size: '100Mi' } },
    },
    {
      apiVersion: API_VERSION,
      kind: 'VirtualMachine',
      metadata: { name: DEMO_PINNED_VM, namespace: DEMO_NAMESPACE },
      spec: {
        virtualMachineClassName: DEMO_CLASS,
        runPolicy: 'Manual',
        cpu: { cores: 1, coreFraction: '10%' },
        memory: { size: '256Mi' },
        nodeSelector: { 'demo.virtualization.deckhouse.io/no-such-node': 'true' },
        blockDeviceRefs: [{ kind: 'VirtualDisk', name: `${DEMO_PINNED_VM}-root` }],
      },
    },
  ];
}

const operation = (name: string, type: 'Start' | 'Stop'): object => ({
  apiVersion: API_VERSION,
  kind: 'VirtualMachineOperation',
  metadata: { name, namespace: DEMO_NAMESPACE },
  spec: { type, virtualMachineName: DEMO_PINNED_VM },
});

/** A Start that cannot finish, superseded by a Stop of the same VM. */
export async function supersedeDemo(d: Deps): Promise<void> {
  d.say(`▶ ${OPERATOR.name}: VirtualMachine ${DEMO_PINNED_VM} (runPolicy Manual, a node selector no node matches) with a blank disk`);
  await d.operator(['apply', '-f', '-'], yaml({ apiVersion: 'v1', kind: 'List', items: pinnedObjects() }));
  await waitFor(`${DEMO_PINNED_VM} Stopped`, async () => (await vmOf(d.admin, DEMO_PINNED_VM)).status?.phase === 'Stopped', WAIT);
  const start = `start-${DEMO_PINNED_VM}`;
  const stop = `stop-${DEMO_PINNED_VM}`;
  d.say(`▶ ${OPERATOR.name}: VirtualMachineOperation ${start} (Start): no node can take the VM, so it stays InProgress`);
  await d.operator(['apply', '-f', '-'], yaml(operation(start, 'Start')));
  await waitFor(`${start} InProgress`, async () => (await opOf(d.admin, start)).status?.phase === 'InProgress', WAIT);
  d.say(`▶ ${OPERATOR.name}: VirtualMachineOperation ${stop} (Stop) of the same VM`);
  await d.operator(['apply', '-f', '-'], yaml(operation(stop, 'Stop')));
  await waitFor(`${start} Superseded`, async () => (await opOf(d.admin, start)).status?.phase === 'Superseded', WAIT);
  await waitFor(`${stop} Completed`, async () => (await opOf(d.admin, stop)).status?.phase === 'Completed', WAIT);
  await waitFor(`${DEMO_PINNED_VM} Stopped again`, async () => (await vmOf(d.admin, DEMO_PINNED_VM)).status?.phase === 'Stopped', WAIT);
  d.say(`✓ ${start} Superseded by ${stop} (Completed); ${DEMO_PINNED_VM} Stopped`);
}
