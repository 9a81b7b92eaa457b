import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import { createCA, createKey, issueCert } from './certs.js';
import { freePort } from './ports.js';
import { logShowsPortInUse, spawnLogged, tailLog, type LoggedProcess } from './process.js';
import { waitFor } from '../../shared/testing/wait.js';

/** Everything a test process needs to reach the control plane; written to DIR/state.json. */
export interface ControlPlaneState {
  workDir: string;
  binDir: string;
  etcdUrl: string;
  server: string;
  kubeconfigPath: string;
  /** CA that signed the apiserver's serving cert (and, conveniently, is trusted for webhooks in tests). */
  servingCaPath: string;
  clientCaPath: string;
  clientCaKeyPath: string;
  auditLogPath: string;
  auditPolicyPath: string;
  /** The apiserver flags minus port-specific ones, reused by extra apiservers sharing the same etcd. */
  apiServerBaseArgs: string[];
  pids: Record<string, number>;
}

export interface ControlPlane {
  state: ControlPlaneState;
  /** Every process of the control plane, for a supervisor that watches them. */
  processes: LoggedProcess[];
  stop(): Promise<void>;
}

/** What the local platform (`npm start`) adds to the test suite's control plane; the default is none. */
export interface ControlPlaneOptions {
  /** Appended to the first apiserver's flags only (not to apiServerBaseArgs), e.g. the audit webhook. */
  apiServerArgs?: string[];
  /** Also run kube-scheduler (pods get placed on nodes). */
  scheduler?: boolean;
  /** Each process in a process group of its own (see spawnLogged): a terminal's Ctrl-C reaches only the caller. */
  detached?: boolean;
}

export interface ApiServerProcess {
  port: number;
  server: string;
  process: LoggedProcess;
}

const START_TIMEOUT_MS = Number(process.env['VIRT_TESTENV_START_TIMEOUT_MS'] ?? 90_000);
const PORT_ATTEMPTS = 5;

/** The one namespace whose Leases the audit log records (tests/integration/service-accounts). */
export const AUDITED_LEASES_NAMESPACE = 'audited-leases';

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version", "/openapi*"]
# Leases are left out (leader election is noise), except in the namespace where a test checks the
# RBAC of a component's own Leases (the policy sees the impersonating user, so it matches by namespace).
- level: Metadata
  namespaces: ["${AUDITED_LEASES_NAMESPACE}"]
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
- level: None
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
- level: RequestResponse
  resources:
  - group: virtualization.deckhouse.io
  - group: internal.virtualization.deckhouse.io
  - group: subresources.virtualization.deckhouse.io
- level: Metadata
`;

/** The first non-loopback IPv4 address of this machine (127.0.0.1 when there is none). */
export function advertiseAddress(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/**
 * GET https://127.0.0.1:port/path trusting `caPem` (or, with `selfSigned`, a component's own
 * throwaway certificate on loopback); resolves with the status code.
 */
export function httpsStatus(url: string, caPem: string, selfSigned = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const tls = selfSigned ? { rejectUnauthorized: false } : { ca: caPem };
    const req = request(url, { ...tls, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function startEtcd(binDir: string, workDir: string, detached: boolean): Promise<{ proc: LoggedProcess; url: string }> {
  for (let attempt = 1; ; attempt++) {
    const [client, peer] = [await freePort(), await freePort()];
    const url = `http://127.0.0.1:${client}`;
    const logPath = join(workDir, `etcd-${attempt}.log`);
    const dataDir = join(workDir, 'etcd-data');
    await rm(dataDir, { recursive: true, force: true });
    const proc = spawnLogged(
      'etcd',
      join(binDir, 'etcd'),
      [
        '--name=default',
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=default=http://127.0.0.1:${peer}`,
        '--unsafe-no-fsync=true',
        '--log-level=warn',
        '--quota-backend-bytes=8589934592',
      ],
      logPath,
      { detached },
    );
    try {
      await waitFor('etcd health', async () => (await fetch(`${url}/health`)).ok, {
        timeoutMs: START_TIMEOUT_MS,
        abortIf: () => (proc.hasExited() ? `etcd exited early (log ${logPath}):\n${tailLog(logPath)}` : undefined),
      });
      return { proc, url };
    } catch (err: unknown) {
      await proc.kill();
      if (attempt < PORT_ATTEMPTS && logShowsPortInUse(logPath)) continue;
      throw err;
    }
  }
}

/** Start one kube-apiserver process on `port` (or a free one, retrying when a port is taken). */
export async function startApiServer(
  state: Pick<ControlPlaneState, 'binDir' | 'workDir' | 'apiServerBaseArgs' | 'servingCaPath'>,
  opts: { port?: number; name?: string; extraArgs?: string[]; detached?: boolean } = {},
): Promise<ApiServerProcess> {
  const caPem = await readFile(state.servingCaPath, 'utf8');
  const name = opts.name ?? 'kube-apiserver';
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort());
    const logPath = join(state.workDir, `${name}-${port}-${attempt}.log`);
    const args = [...state.apiServerBaseArgs, `--secure-port=${port}`, `--service-account-issuer=https://127.0.0.1:${port}/`, ...(opts.extraArgs ?? [])];
    const proc = spawnLogged(name, join(state.binDir, 'kube-apiserver'), args, logPath, { detached: opts.detached === true });
    const server = `https://127.0.0.1:${port}`;
    try {
      await waitFor(`${name} /readyz`, async () => (await httpsStatus(`${server}/readyz`, caPem)) === 200, {
        timeoutMs: START_TIMEOUT_MS,
        intervalMs: 200,
        abortIf: () => (proc.hasExited() ? `${name} exited early (log ${logPath}):\n${tailLog(logPath)}` : undefined),
      });
      return { port, server, process: proc };
    } catch (err: unknown) {
      await proc.kill();
      if (opts.port === undefined && attempt < PORT_ATTEMPTS && logShowsPortInUse(logPath)) continue;
      throw err;
    }
  }
}

function kubeconfigYaml(server: string, caPath: string, certPath: string, keyPath: string, user: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: virt-testenv
  cluster:
    server: ${server}
    certificate-authority: ${caPath}
users:
- name: ${user}
  user:
    client-certificate: ${certPath}
    client-key: ${keyPath}
contexts:
- name: virt-testenv
  context:
    cluster: virt-testenv
    user: ${user}
current-context: virt-testenv
`;
}

/**
 * Generate certs, start etcd, kube-apiserver and kube-controller-manager (and, on request,
 * kube-scheduler), write an admin kubeconfig and state.json. A failure stops what was started.
 */
export async function startControlPlane(binDir: string, workDir: string, opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const pki = join(workDir, 'pki');
  await mkdir(pki, { recursive: true });
  const [servingCa, clientCa, frontProxyCa] = await Promise.all([createCA(pki, 'serving'), createCA(pki, 'client'), createCA(pki, 'front-proxy')]);
  const [serving, admin, proxyClient, kcmClient, schedulerClient] = await Promise.all([
    issueCert(servingCa, pki, 'apiserver', {
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
      ipAddresses: ['127.0.0.1', '10.0.0.1'],
    }),
    issueCert(clientCa, pki, 'admin', { commonName: 'admin', organizations: ['system:masters'], usage: 'client' }),
    issueCert(frontProxyCa, pki, 'front-proxy-client', { commonName: 'front-proxy-client', usage: 'client' }),
    // Its own user name, so that audit-log readers can tell its writes from the tests' (admin).
    issueCert(clientCa, pki, 'kube-controller-manager', {
      commonName: 'system:kube-controller-manager',
      organizations: ['system:masters'],
      usage: 'client',
    }),
    opts.scheduler === true
      ? issueCert(clientCa, pki, 'kube-scheduler', { commonName: 'system:kube-scheduler', organizations: ['system:masters'], usage: 'client' })
      : undefined,
  ]);
  const saKey = join(pki, 'sa.key');
  await createKey(saKey);
  const auditPolicyPath = join(workDir, 'audit-policy.yaml');
  const auditLogPath = join(workDir, 'audit.log');
  await writeFile(auditPolicyPath, AUDIT_POLICY);

  const detached = opts.detached === true;
  const etcd = await startEtcd(binDir, workDir, detached);
  const apiServerBaseArgs = [
    `--etcd-servers=${etcd.url}`,
    '--bind-address=127.0.0.1',
    `--advertise-address=${advertiseAddress()}`,
    '--endpoint-reconciler-type=none',
    `--tls-cert-file=${serving.certPath}`,
    `--tls-private-key-file=${serving.keyPath}`,
    `--client-ca-file=${clientCa.certPath}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--disable-admission-plugins=ServiceAccount',
    '--authorization-mode=RBAC',
    `--service-account-key-file=${saKey}`,
    `--service-account-signing-key-file=${saKey}`,
    `--requestheader-client-ca-file=${frontProxyCa.certPath}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${proxyClient.certPath}`,
    `--proxy-client-key-file=${proxyClient.keyPath}`,
    `--audit-policy-file=${auditPolicyPath}`,
    `--audit-log-path=${auditLogPath}`,
    '--profiling=false',
    '--v=1',
  ];
  const base = { binDir, workDir, apiServerBaseArgs, servingCaPath: servingCa.certPath };
  let api: ApiServerProcess;
  try {
    api = await startApiServer(base, { extraArgs: opts.apiServerArgs ?? [], detached });
  } catch (err: unknown) {
    await etcd.proc.stop();
    throw err;
  }
  const kubeconfigPath = join(workDir, 'kubeconfig');
  await writeFile(kubeconfigPath, kubeconfigYaml(api.server, servingCa.certPath, admin.certPath, admin.keyPath, 'admin'));
  const kcmKubeconfig = join(workDir, 'kube-controller-manager.kubeconfig');
  await writeFile(kcmKubeconfig, kubeconfigYaml(api.server, servingCa.certPath, kcmClient.certPath, kcmClient.keyPath, 'kcm'));
  const started: LoggedProcess[] = [etcd.proc, api.process];
  const stopAll = async (): Promise<void> => {
    for (const p of [...started].reverse()) await p.stop();
  };
  try {
    const kcm = startControllerManager({ binDir, workDir, kubeconfig: kcmKubeconfig, saKey, rootCa: servingCa.certPath, detached });
    let scheduler: Promise<LoggedProcess> | undefined;
    if (schedulerClient !== undefined) {
      const schedKubeconfig = join(workDir, 'kube-scheduler.kubeconfig');
      await writeFile(schedKubeconfig, kubeconfigYaml(api.server, servingCa.certPath, schedulerClient.certPath, schedulerClient.keyPath, 'kube-scheduler'));
      scheduler = startScheduler({ binDir, workDir, kubeconfig: schedKubeconfig, detached });
    }
    const results = await Promise.allSettled([kcm, ...(scheduler !== undefined ? [scheduler] : [])]);
    for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  } catch (err: unknown) {
    await stopAll();
    throw err;
  }
  const pids: Record<string, number> = {};
  for (const p of started) pids[p.name === 'kube-apiserver' ? 'apiserver' : p.name] = p.pid;
  const state: ControlPlaneState = {
    ...base,
    etcdUrl: etcd.url,
    server: api.server,
    kubeconfigPath,
    clientCaPath: clientCa.certPath,
    clientCaKeyPath: clientCa.keyPath,
    auditLogPath,
    auditPolicyPath,
    pids,
  };
  await writeFile(join(workDir, 'state.json'), JSON.stringify(state, null, 2));
  return { state, processes: [...started], stop: stopAll };
}

/**
 * kube-controller-manager with its default controllers, so that namespaces really terminate and the
 * garbage collector really follows ownerReferences. No leader election (one instance); its own
 * client certificate in system:masters; the service-account key signs tokens for the token
 * controller. Ready when its /healthz answers (self-signed serving certificate in its work dir).
 */
export function startControllerManager(opts: {
  binDir: string;
  workDir: string;
  kubeconfig: string;
  saKey: string;
  rootCa: string;
  detached?: boolean;
}): Promise<LoggedProcess> {
  return startKubeComponent('kube-controller-manager', 'kcm-certs', opts, [
    `--service-account-private-key-file=${opts.saKey}`,
    `--root-ca-file=${opts.rootCa}`,
    '--use-service-account-credentials=false',
    '--controllers=*',
    // Fast enough for tests to see deletions follow promptly; the defaults are tuned for big clusters.
    '--concurrent-gc-syncs=10',
    '--concurrent-namespace-syncs=5',
    '--namespace-sync-period=1m',
  ]);
}

/**
 * kube-scheduler with its defaults (one instance, no leader election), so that pods are placed on
 * nodes. Ready when its /healthz answers (self-signed serving certificate in its work dir).
 */
export function startScheduler(opts: { binDir: string; workDir: string; kubeconfig: string; detached?: boolean }): Promise<LoggedProcess> {
  return startKubeComponent('kube-scheduler', 'scheduler-certs', opts, []);
}

/**
 * One of the control plane's Go components (`binary` in binDir) against the apiserver of `kubeconfig`,
 * without leader election, serving /healthz on a free loopback port; resolves once that answers 200.
 * A port taken meanwhile (seen in its log) is retried on another one.
 */
async function startKubeComponent(
  binary: 'kube-controller-manager' | 'kube-scheduler',
  certDir: string,
  opts: { binDir: string; workDir: string; kubeconfig: string; detached?: boolean },
  extraArgs: readonly string[],
): Promise<LoggedProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const logPath = join(opts.workDir, `${binary}-${attempt}.log`);
    const proc = spawnLogged(
      binary,
      join(opts.binDir, binary),
      [
        `--kubeconfig=${opts.kubeconfig}`,
        `--authentication-kubeconfig=${opts.kubeconfig}`,
        `--authorization-kubeconfig=${opts.kubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${port}`,
        `--cert-dir=${join(opts.workDir, certDir)}`,
        ...extraArgs,
        '--profiling=false',
        '--v=1',
      ],
      logPath,
      { detached: opts.detached === true },
    );
    try {
      await waitFor(`${binary} /healthz`, async () => (await httpsStatus(`https://127.0.0.1:${port}/healthz`, '', true)) === 200, {
        timeoutMs: START_TIMEOUT_MS,
        intervalMs: 200,
        abortIf: () => (proc.hasExited() ? `${binary} exited early (log ${logPath}):\n${tailLog(logPath)}` : undefined),
      });
      return proc;
    } catch (err: unknown) {
      await proc.kill();
      if (attempt < PORT_ATTEMPTS && logShowsPortInUse(logPath)) continue;
      throw err;
    }
  }
}

/** Write a kubeconfig for an arbitrary server address with the admin credentials of `state`. */
export async function writeAdminKubeconfig(state: ControlPlaneState, server: string, path: string): Promise<void> {
  const pki = join(state.workDir, 'pki');
  await writeFile(path, kubeconfigYaml(server, state.servingCaPath, join(pki, 'admin.crt'), join(pki, 'admin.key'), 'admin'));
}
