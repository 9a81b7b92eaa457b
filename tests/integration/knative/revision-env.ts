/**
 * The set-up the queue-proxy system tests share: an apiserver of their own on the run's etcd (key
 * prefix of its own, `--enable-aggregator-routing` so it calls Service endpoints, the EndpointSlices
 * a test writes as the endpoints controller would, rather than a ClusterIP), a CA and a serving
 * certificate for the Service's names (what queue-proxy serves), and revision pods (revision-pod.ts)
 * started and ready through their queue-proxy.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../../shared/testing/wait.js';
import { createCA, getTestEnv, issueCert, kubectl, startExtraApiServer, type ExtraApiServer } from '../../env/index.js';
import { getThroughQueueProxy, QUEUE_TLS_PORT, startPodNetwork, startRevisionPod, type PodNetwork, type RevisionPod, type RevisionPodOptions } from './revision-pod.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const NAMESPACE = 'd8-virtualization';

/** What a revision pod may set beyond the environment's own options. */
export type PodChoice = Partial<Pick<RevisionPodOptions, 'service' | 'userContainer' | 'functionEnv' | 'containerConcurrency' | 'timeoutSeconds'>>;

export interface RevisionEnv {
  readonly id: string;
  readonly apiserver: ExtraApiServer;
  /** The CA of the serving certificate (PEM). */
  readonly ca: Buffer;
  /** `<service>.d8-virtualization.svc`, the name the certificate is for. */
  readonly serviceHost: string;
  readonly pods: readonly RevisionPod[];
  /** kubectl against the apiserver; throws with its stderr when it fails. */
  readonly ok: (args: string[], stdin?: string) => Promise<string>;
  /** A revision pod, once its readiness answers 200 through its queue-proxy's TLS port. */
  startPod(index: number, choice?: PodChoice): Promise<RevisionPod>;
  /** A network namespace of its own (address index `index` of the environment's subnet), the apiserver bridged in; stopped with the environment. */
  startNetwork(index: number, name: string): Promise<PodNetwork>;
  /** The Service's endpoints: the pods' queue-proxy TLS port (EndpointSlice `<service>-pods`). */
  setEndpoints(service: string, ready: readonly RevisionPod[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startRevisionEnv(name: string, service: string, defaults: PodChoice = {}): Promise<RevisionEnv> {
  const knativeDir = execFileSync('bash', [join(REPO, 'tests/env/knative-modules.sh')], { encoding: 'utf8' }).trim();
  const id = randomBytes(3).toString('hex');
  const apiserver = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/${name}-${id}`, '--enable-aggregator-routing=true'] });
  try {
    return await revisionEnv(name, id, apiserver, service, join(knativeDir, 'queue-proxy'), defaults);
  } catch (err: unknown) {
    await apiserver.stop();
    throw err;
  }
}

async function revisionEnv(name: string, id: string, apiserver: ExtraApiServer, service: string, queueProxy: string, defaults: PodChoice): Promise<RevisionEnv> {
  const workDir = join(getTestEnv().workDir, `${name}-${id}`);
  mkdirSync(workDir, { recursive: true });
  const serviceHost = `${service}.${NAMESPACE}.svc`;
  const authority = await createCA(workDir, service);
  const cert = await issueCert(authority, workDir, 'serving', { commonName: serviceHost, usage: 'server', dnsNames: [serviceHost, `${serviceHost}.cluster.local`] });
  const ca = readFileSync(authority.certPath);
  const podOptions: Omit<RevisionPodOptions, 'index'> = {
    subnet: 1 + (parseInt(id, 16) % 250),
    workDir,
    queueProxy,
    certPath: cert.certPath,
    keyPath: cert.keyPath,
    kubeconfigPath: apiserver.kubeconfigPath,
    apiPort: Number(new URL(apiserver.server).port),
    functionEnv: {},
    ...defaults,
  };
  const pods: RevisionPod[] = [];
  const networks: PodNetwork[] = [];
  const ok = async (args: string[], stdin?: string): Promise<string> => {
    const r = await kubectl(args, { kubeconfigPath: apiserver.kubeconfigPath, ...(stdin === undefined ? {} : { stdin }) });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${r.stderr}`);
    return r.stdout;
  };
  return {
    id,
    apiserver,
    ca,
    serviceHost,
    pods,
    ok,
    async startPod(index, choice = {}) {
      const pod = await startRevisionPod({ ...podOptions, ...choice, index });
      pods.push(pod);
      await waitFor(`${pod.name} ready through its queue-proxy`, async () => (await getThroughQueueProxy(pod, '/health/readiness', ca, serviceHost).catch(() => 0)) === 200, {
        timeoutMs: 120_000,
        intervalMs: 500,
        abortIf: () => pod.exited(),
      });
      return pod;
    },
    async startNetwork(index, netName) {
      const net = await startPodNetwork({ ...podOptions, index }, netName);
      networks.push(net);
      return net;
    },
    async setEndpoints(svc, ready) {
      const slice = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${svc}-pods`, namespace: NAMESPACE, labels: { 'kubernetes.io/service-name': svc } },
        addressType: 'IPv4',
        endpoints: ready.map((p) => ({ addresses: [p.ip], conditions: { ready: true }, targetRef: { kind: 'Pod', name: p.name, namespace: NAMESPACE } })),
        ports: [{ name: 'https', port: QUEUE_TLS_PORT, protocol: 'TCP' }],
      };
      await ok(['apply', '--server-side', '--force-conflicts', `--field-manager=${name}-test`, '-f', '-'], JSON.stringify(slice));
    },
    async stop() {
      await Promise.all([...pods, ...networks].map((p) => p.stop()));
      await apiserver.stop();
    },
  };
}
