/**
 * The demo's pool: a VirtualMachinePool of 3 VMs (each with its own blank disk, as its disk template
 * says), then one of them removed by name with `d8v scaledownwith`: the pool keeps the other two and
 * does not replace it. The members show in the live view's VM list as they come and go.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION } from '../../shared/api/resources/common.js';
import { POOL_LABELS } from '../../shared/api/resources/vmpool.js';
import type { KubeClient } from '../../shared/kube/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import type { Kubectl } from '../install.js';
import { DEMO_CLASS, DEMO_NAMESPACE, DISK_SIZE, OPERATOR } from './objects.js';

export const DEMO_POOL = 'demo-pool';
const GROUP = '/apis/virtualization.deckhouse.io/v1alpha2';
const D8V = join(import.meta.dirname, '..', '..', 'shared', 'cli', 'd8v.js');
const WAIT = { timeoutMs: 180_000, intervalMs: 200 };
const run = promisify(execFile);

export function pool(): object {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachinePool',
    metadata: { name: DEMO_POOL, namespace: DEMO_NAMESPACE },
    spec: {
      replicas: 3,
      scaleDownPolicy: 'Explicit',
      virtualDiskTemplates: [{ name: 'root', spec: { persistentVolumeClaim: { size: DISK_SIZE } } }],
      virtualMachineTemplate: {
        metadata: { labels: { app: DEMO_POOL } },
        spec: {
          virtualMachineClassName: DEMO_CLASS,
          runPolicy: 'AlwaysOn',
          cpu: { cores: 1, coreFraction: '10%' },
          memory: { size: '256Mi' },
          liveMigrationPolicy: 'PreferSafe',
          blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'root' }],
        },
      },
    },
  };
}

interface PoolView {
  spec: { replicas?: number };
  status?: { replicas?: number; readyReplicas?: number };
}

async function members(admin: KubeClient): Promise<string[]> {
  const list = (await admin.rest.request({
    method: 'GET',
    path: `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachines`,
    query: { labelSelector: `${POOL_LABELS.pool}=${DEMO_POOL}` },
    what: 'list the pool members',
  })) as { items: { metadata: { name: string; deletionTimestamp?: string } }[] };
  return list.items
    .filter((v) => v.metadata.deletionTimestamp === undefined)
    .map((v) => v.metadata.name)
    .sort();
}

async function poolWhen(admin: KubeClient, what: string, check: (p: PoolView) => boolean): Promise<PoolView> {
  return waitFor(
    what,
    async () => {
      const p = (await admin.rest.request({
        method: 'GET',
        path: `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachinepools/${DEMO_POOL}`,
        what: 'get the pool',
      })) as PoolView;
      return check(p) && p;
    },
    WAIT,
  );
}

export interface PoolDemoDeps {
  admin: KubeClient;
  operator: Kubectl;
  /** The kubeconfig d8v runs with. */
  d8vKubeconfig: string;
  say(line: string): void;
}

/** Pool of 3 Running, then one member removed with d8v scaledownwith (3 → 2); resolves with the members left. */
export async function poolDemo(d: PoolDemoDeps): Promise<string[]> {
  d.say(`▶ ${OPERATOR.name}: VirtualMachinePool ${DEMO_POOL} (3 VMs, a ${DISK_SIZE} disk each from its disk template, scaleDownPolicy Explicit)`);
  await d.operator(['apply', '-f', '-'], JSON.stringify(pool()));
  await poolWhen(d.admin, 'the pool with 3 ready VMs', (p) => p.status?.readyReplicas === 3);
  const all = await members(d.admin);
  d.say(`✓ pool ${DEMO_POOL}: 3 of 3 Running (${all.join(', ')}), each on its own disk <vm>-root`);
  const targets = all.slice(0, 1);
  d.say(`▶ d8v scaledownwith ${DEMO_POOL} ${targets.join(' ')} (remove this member by name; as the platform admin)`);
  const { stdout } = await run(process.execPath, [D8V, 'scaledownwith', DEMO_POOL, ...targets, '-n', DEMO_NAMESPACE], {
    env: { ...process.env, KUBECONFIG: d.d8vKubeconfig },
  });
  d.say(`  ${stdout.trim()}`);
  await poolWhen(d.admin, 'the pool at 2 replicas', (p) => p.spec.replicas === 2 && p.status?.replicas === 2 && p.status.readyReplicas === 2);
  const left = await members(d.admin);
  d.say(`✓ pool ${DEMO_POOL}: replicas 3 → 2, ${left.join(', ')} kept, ${targets.join(', ')} not replaced`);
  return left;
}
