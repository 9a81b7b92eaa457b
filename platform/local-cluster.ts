/**
 * The local cluster of `npm start`: the test suite's control plane (tests/env) plus kube-scheduler
 * and the apiserver's audit webhook, then kwok for simulated nodes and pods (docs/adr/0007) and the
 * nodes themselves. Every process is registered with the supervisor as it starts.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dump, loadAll } from 'js-yaml';
import { join } from 'node:path';
import { ConflictError } from '../shared/errors/index.js';
import { randomBytes } from 'node:crypto';
import { createCA, issueCert, type CertAuthority } from '../tests/env/certs.js';
import { startControlPlane, type ControlPlaneState } from '../tests/env/control-plane.js';
import { freePort } from '../tests/env/ports.js';
import { logShowsPortInUse, spawnLogged, tailLog, type LoggedProcess } from '../tests/env/process.js';
import type { KubeClient } from '../shared/kube/index.js';
import type { Supervisor } from './supervisor.js';
import { waitFor } from '../shared/testing/wait.js';

export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
/** Labels every Deckhouse node of a virtualization node group carries: its group, and KVM available there. */
export const DECKHOUSE_NODE_LABELS: Readonly<Record<string, string>> = {
  'node.deckhouse.io/group': 'worker',
  'virtualization.deckhouse.io/kvm-enabled': 'true',
};
/** Pod addresses of the simulated nodes: one /24 of this per node. */
export const POD_CIDR = '10.244.0.0/16';
/** The control plane's service range (tests/env/control-plane.ts). */
export const SERVICE_CIDR = '10.0.0.0/24';
const KWOK_VERSION = process.env['KWOK_VERSION'] ?? '0.8.0';
const START_TIMEOUT_MS = Number(process.env['VIRT_TESTENV_START_TIMEOUT_MS'] ?? 90_000);

/** The apiserver's identity towards the audit function, and the certificate the function serves it with. */
export interface AuditWebhookIdentity {
  /** The user of the static token the webhook's kubeconfig carries (bound to the audit-sender role by the platform). */
  readonly user: string;
  readonly certPath: string;
  readonly keyPath: string;
}

/** The static-token user the apiserver's audit webhook sends as. */
export const AUDIT_WEBHOOK_USER = 'system:virtualization:audit-webhook';

export interface LocalCluster {
  readonly state: ControlPlaneState;
  readonly auditWebhook: AuditWebhookIdentity;
  /** A kubeconfig for a user of the client CA (CN = name, O = groups). */
  userKubeconfig(name: string, groups?: string[]): Promise<string>;
}

function kubeconfigYaml(state: ControlPlaneState, user: string, certPath: string, keyPath: string): string {
  return `apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "${state.server}", certificate-authority: "${state.servingCaPath}"}}]
users: [{name: "${user}", user: {client-certificate: "${certPath}", client-key: "${keyPath}"}}]
contexts: [{name: local, context: {cluster: local, user: "${user}"}}]
current-context: local
`;
}

/**
 * The apiserver's audit webhook backend: a kubeconfig pointing at the audit function's route over
 * HTTPS (the apiserver sends a kubeconfig's credentials only over TLS), carrying a random token the
 * apiserver itself knows (`--token-auth-file`: the ServiceAccounts do not exist yet when it starts),
 * whose user the platform binds to the install's audit-sender role. The audit function checks it
 * by TokenReview like any sender.
 */
async function auditWebhookArgs(workDir: string, auditPort: number): Promise<{ args: string[]; identity: AuditWebhookIdentity }> {
  const pki = join(workDir, 'pki');
  const ca = await createCA(pki, 'audit-webhook-ca');
  const cert = await issueCert(ca, pki, 'audit-serving', { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'], usage: 'server' });
  const token = randomBytes(32).toString('base64url');
  const tokens = join(workDir, 'audit-webhook-token.csv');
  await writeFile(tokens, `${token},${AUDIT_WEBHOOK_USER},audit-webhook\n`, { mode: 0o600 });
  const path = join(workDir, 'audit-webhook.kubeconfig');
  await writeFile(
    path,
    `apiVersion: v1
kind: Config
clusters: [{name: audit, cluster: {server: "https://127.0.0.1:${auditPort}/audit-webhook", certificate-authority: "${ca.certPath}"}}]
users: [{name: kube-apiserver, user: {token: "${token}"}}]
contexts: [{name: audit, context: {cluster: audit, user: kube-apiserver}}]
current-context: audit
`,
    { mode: 0o600 },
  );
  return {
    args: [
      `--token-auth-file=${tokens}`,
      `--audit-webhook-config-file=${path}`,
      '--audit-webhook-mode=batch',
      '--audit-webhook-batch-max-wait=200ms',
      '--audit-webhook-batch-throttle-enable=false',
    ],
    identity: { user: AUDIT_WEBHOOK_USER, certPath: cert.certPath, keyPath: cert.keyPath },
  };
}

export async function startLocalCluster(opts: {
  binDir: string;
  workDir: string;
  supervisor: Supervisor;
  /** The port the audit function will listen on (the apiserver's webhook is configured at start). */
  auditPort: number;
}): Promise<LocalCluster> {
  const webhook = await auditWebhookArgs(opts.workDir, opts.auditPort);
  const cp = await startControlPlane(opts.binDir, opts.workDir, { scheduler: true, detached: true, apiServerArgs: webhook.args });
  // A throwaway cluster: its processes get a short grace (kube-apiserver may take 10 s to exit after its audit backend).
  for (const p of cp.processes) opts.supervisor.add(p, { graceMs: 3_000 });
  const state = cp.state;
  const clientCa: CertAuthority = { name: 'client', certPath: state.clientCaPath, keyPath: state.clientCaKeyPath };
  const pki = join(opts.workDir, 'pki');
  return {
    state,
    auditWebhook: webhook.identity,
    async userKubeconfig(name, groups = []) {
      const file = name.replace(/[^a-zA-Z0-9-]/g, '_');
      const cert = await issueCert(clientCa, pki, `user-${file}`, { commonName: name, organizations: groups, usage: 'client' });
      const path = join(opts.workDir, `user-${file}.kubeconfig`);
      await writeFile(path, kubeconfigYaml(state, name, cert.certPath, cert.keyPath));
      return path;
    },
  };
}

/** kwok's pod stages that run a pod (the rest, pod-delete, finishes a deletion as a kubelet would). */
const KWOK_RUNNING_STAGES = ['pod-ready', 'pod-complete'];

/**
 * A digest in every container status, as a kubelet reports the image it pulled (kwok pulls none:
 * one made-up digest for every image). virt-controller renders a migration target only from the
 * source pod's container-disk digests ("no reproducible image digest can be detected" otherwise).
 */
export const SIMULATED_IMAGE_ID = `sha256:${'0'.repeat(64)}`;

/**
 * The release's default stages (cached with the binary) with image digests in the container
 * statuses (SIMULATED_IMAGE_ID) and, when `unmanaged` is given, every pod carrying that label left
 * out of the stages that run a pod: another simulator plays those pods' kubelet (the storage
 * simulator runs the importer pods as programs). Their deletion is still finished by kwok.
 */
export async function writeKwokStages(source: string, target: string, unmanaged?: string): Promise<void> {
  const docs = loadAll(await readFile(source, 'utf8')).filter((d) => d !== null && d !== undefined) as Array<{
    metadata?: { name?: string };
    spec?: { selector?: { matchExpressions?: object[] }; next?: { statusTemplate?: string } };
  }>;
  for (const d of docs) {
    if (!KWOK_RUNNING_STAGES.includes(d.metadata?.name ?? '')) continue;
    const next = d.spec?.next;
    if (next?.statusTemplate !== undefined) {
      next.statusTemplate = next.statusTemplate.replace(
        /\n( *)- image: (\{\{ \.image \| Quote \}\})\n/g,
        `\n$1- image: $2\n$1  imageID: "${SIMULATED_IMAGE_ID}"\n`,
      );
    }
    if (unmanaged === undefined) continue;
    const selector = (d.spec ??= {}).selector ?? (d.spec.selector = {});
    (selector.matchExpressions ??= []).push({ key: `.metadata.labels[${JSON.stringify(unmanaged)}]`, operator: 'DoesNotExist' });
  }
  await writeFile(target, docs.map((d) => dump(d, { lineWidth: -1 })).join('---\n'));
}

/**
 * kwok: the kubelets of every node annotated `kwok.x-k8s.io/node: fake`, with the release's default
 * stages, except for pods labelled `unmanagedPodLabel` (see writeKwokStages).
 */
export async function startKwok(
  cluster: LocalCluster,
  opts: { binDir: string; workDir: string; supervisor: Supervisor; unmanagedPodLabel?: string },
): Promise<void> {
  // kwok plays every node's kubelet: it acts as a node would (system:node:…, group system:nodes).
  const kubeconfig = await cluster.userKubeconfig('system:node:kwok', ['system:nodes', 'system:masters']);
  const proc = await startKwokProcess({ ...opts, kubeconfig });
  opts.supervisor.add(proc, { graceMs: 3_000 });
}

/** The kwok process against the apiserver of `kubeconfig` (see startKwok); resolves once it is healthy. */
export async function startKwokProcess(opts: { binDir: string; workDir: string; kubeconfig: string; unmanagedPodLabel?: string }): Promise<LoggedProcess> {
  const dir = join(opts.binDir, `kwok-${KWOK_VERSION}`);
  const stages = join(opts.workDir, 'kwok-stages.yaml');
  await writeKwokStages(join(dir, 'stages.yaml'), stages, opts.unmanagedPodLabel);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const logPath = join(opts.workDir, `kwok-${attempt}.log`);
    const proc = spawnLogged(
      'kwok',
      join(dir, 'kwok'),
      [
        `--kubeconfig=${opts.kubeconfig}`,
        `--config=${stages}`,
        '--manage-all-nodes=false',
        `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
        '--node-lease-duration-seconds=40',
        `--cidr=${POD_CIDR}`,
        '--node-ip=10.255.0.1',
        `--server-address=127.0.0.1:${port}`,
      ],
      logPath,
      { detached: true },
    );
    try {
      await waitFor('kwok /healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, {
        timeoutMs: START_TIMEOUT_MS,
        intervalMs: 200,
        abortIf: () => (proc.hasExited() ? `kwok exited early (log ${logPath}):\n${tailLog(logPath)}` : undefined),
      });
      return proc;
    } catch (err: unknown) {
      await proc.kill();
      if (attempt < 5 && logShowsPortInUse(logPath)) continue;
      throw err;
    }
  }
}

/** `node-1` … `node-N`: simulated nodes (kwok runs them) with room for a few VMs each. */
export async function createNodes(admin: KubeClient, count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `node-${i}`;
    const body = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'node-role.kubernetes.io/worker': '',
          type: 'kwok',
          // What a Deckhouse node carries and the module's placement relies on: its node group, KVM there.
          ...DECKHOUSE_NODE_LABELS,
        },
      },
      spec: { podCIDR: `10.244.${i}.0/24`, podCIDRs: [`10.244.${i}.0/24`] },
      // Nodes may carry their status on create; kwok keeps capacity and allocatable as given.
      status: {
        capacity: { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' },
        allocatable: { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' },
        nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', osImage: 'kwok simulated node' },
      },
    };
    await admin.rest.request({ method: 'POST', path: '/api/v1/nodes', body, what: `create Node ${name}` }).catch((err: unknown) => {
      if (!(err instanceof ConflictError)) throw err;
    });
    names.push(name);
  }
  return names;
}
