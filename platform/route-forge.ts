/**
 * What route-forge needs in the local platform: Cilium's part, simulated (the CiliumNode CRD and one
 * CiliumNode per simulated node, each with a CiliumInternalIP on 10.200.0.0/24), and a node's kernel
 * to program: a network namespace made here, set up as node-1 (its `cilium_host` holds node-1's
 * CiliumInternalIP, `veth0` reaches the other nodes' addresses). Without root (no namespaces), the
 * daemon runs in dry-run mode and logs the routes it would write.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { createNetns, setUpNode, type TestNetns } from '../shared/testing/netns.js';
import { KubeClient } from '../shared/kube/index.js';
import { CiliumNodeSchema, ciliumNodeDescriptor, type CiliumNode } from '../shared/api/k8s/cilium.js';
import type { Kubectl } from './install.js';
import { REPO_ROOT } from './units.js';

const run = promisify(execFile);
const CRD = join(REPO_ROOT, 'platform/cilium/ciliumnode-crd.yaml');
/** The file in the work dir naming the namespace, so a platform killed hard has it removed at the next start. */
const NETNS_FILE = 'route-forge-netns';
/** Marks the CiliumNodes the platform made: no Cilium runs here. */
export const SIMULATED_LABEL = 'virtualization.deckhouse.io/simulated-cilium';

/** The CiliumInternalIP the platform gives the i-th node (0-based). */
export function ciliumInternalIP(index: number): string {
  return `10.200.0.${index + 2}`;
}

export class LocalRouteForge {
  private netns: TestNetns | undefined;

  constructor(
    private readonly admin: KubeClient,
    private readonly kubectl: Kubectl,
    private readonly say: (line: string) => void,
    private readonly workDir: string,
  ) {}

  /** Cilium's objects, and the environment route-forge runs with (a namespace, or dry-run). */
  async prepare(nodes: readonly string[]): Promise<Record<string, string>> {
    await this.kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', '-f', CRD]);
    await this.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/ciliumnodes.cilium.io']);
    const client = this.admin.resource(ciliumNodeDescriptor, CiliumNodeSchema, 'virtualization-platform');
    await Promise.all(
      nodes.map((name, i) => {
        const node: CiliumNode = {
          apiVersion: 'cilium.io/v2',
          kind: 'CiliumNode',
          metadata: { name, labels: { [SIMULATED_LABEL]: 'true' } },
          spec: { addresses: [{ type: 'CiliumInternalIP', ip: ciliumInternalIP(i) }] },
        };
        return client.apply(node, { force: true });
      }),
    );
    const local = nodes[0];
    if (local === undefined || !(await namespacesWork())) {
      this.say('  route-forge: no network namespaces here (needs root): DRY_RUN, it logs the routes it would write');
      return { DRY_RUN: 'true' };
    }
    this.netns = await createNetns('virt-node');
    await writeFile(join(this.workDir, NETNS_FILE), this.netns.name);
    await setUpNode(this.netns, ciliumInternalIP(0));
    this.say(`  route-forge: programs network namespace ${this.netns.name} as ${local}: \`ip -n ${this.netns.name} route show table 1490\``);
    return { NETNS: this.netns.name };
  }

  async stop(): Promise<void> {
    await this.netns?.remove();
    this.netns = undefined;
  }
}

/** Remove the namespace a platform killed hard left in `workDir` (see leftovers.ts); its name, if any. */
export async function removeLeftoverNetns(workDir: string): Promise<string | undefined> {
  const file = join(workDir, NETNS_FILE);
  if (!existsSync(file)) return undefined;
  const name = readFileSync(file, 'utf8').trim();
  if (!/^virt-node-[0-9a-f]+$/.test(name)) return undefined;
  await run('ip', ['netns', 'del', name]).catch(() => undefined);
  return name;
}

/** Whether this process may create network namespaces (root, and `ip netns` present). */
async function namespacesWork(): Promise<boolean> {
  if (process.getuid?.() !== 0) return false;
  return run('ip', ['netns', 'list']).then(
    () => true,
    () => false,
  );
}
