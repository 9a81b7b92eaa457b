/**
 * Network namespaces for the route-forge and USB/IP tests, the benchmarks and the local platform,
 * made by whoever uses them: a node as Cilium leaves it (`cilium_host`/`cilium_net`, a veth pair as
 * in Cilium, since this kernel has no dummy links), one link towards the other nodes, and nothing
 * that reaches outside the namespace.
 * Every address used is inside the namespace; no packet is ever sent.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** `ip -n NAME ...` (throws with stderr on failure). */
export async function ipIn(netns: string, args: readonly string[], stdin?: string): Promise<string> {
  if (stdin === undefined) return (await run('ip', ['-n', netns, ...args])).stdout;
  return await new Promise((resolve, reject) => {
    const child = execFile('ip', ['-n', netns, ...args], (err, stdout, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout)));
    // ip may end before it reads all of its input (a batch stops at its first error): EPIPE then, and the exit code says why.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(stdin);
  });
}

/** A fresh named network namespace; `remove()` deletes it (and with it every link and route). */
export interface TestNetns {
  readonly name: string;
  ip(args: readonly string[], stdin?: string): Promise<string>;
  /** `ip route show table T`, one line per route, trimmed. */
  table(table: number): Promise<string[]>;
  /** `ip rule show` lines that look up table T. */
  rules(table: number): Promise<string[]>;
  remove(): Promise<void>;
}

export async function createNetns(prefix = 'rf'): Promise<TestNetns> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await run('ip', ['netns', 'add', name]);
  const ip = (args: readonly string[], stdin?: string): Promise<string> => ipIn(name, args, stdin);
  return {
    name,
    ip,
    table: async (table) =>
      (await ip(['route', 'show', 'table', String(table)]).catch(() => ''))
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '')
        .sort(),
    rules: async (table) =>
      (await ip(['rule', 'show']))
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => new RegExp(`lookup ${table}$`).test(l))
        .sort(),
    remove: async () => {
      await run('ip', ['netns', 'del', name]).catch(() => undefined);
    },
  };
}

/**
 * This node: `cilium_host` holding `localIP` (its CiliumInternalIP), `veth0` with 10.200.0.1/24
 * towards other nodes (10.200.0.2 directly, 10.201.0.0/24 behind 10.200.0.3).
 */
export async function setUpNode(ns: TestNetns, localIP: string): Promise<void> {
  await ns.ip(
    ['-batch', '-'],
    [
      'link set lo up',
      'link add cilium_host type veth peer name cilium_net',
      'link set cilium_net up',
      'link set cilium_host up',
      `addr add ${localIP}/32 dev cilium_host`,
      'link add veth0 type veth peer name veth1',
      'link set veth1 up',
      'link set veth0 up',
      'addr add 10.200.0.1/24 dev veth0',
      'route add 10.201.0.0/24 via 10.200.0.3 dev veth0',
    ].join('\n') + '\n',
  );
}
