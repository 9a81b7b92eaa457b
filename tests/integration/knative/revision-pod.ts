/**
 * One revision pod of a Knative Service, as Knative Serving runs it, out-of-cluster: a network
 * namespace of its own (the pod network: a veth pair, the pod address on `eth0`, the host end holding
 * the other address of a /30), the user container (a function over plain HTTP on 127.0.0.1:8080, as
 * Knative's `USER_PORT`; the admission function unless told otherwise) and Knative's own queue-proxy in front of it (built from
 * the pinned Serving module by tests/env/knative-modules.sh) with the env Knative's revision reconciler
 * gives it and its serving certificate where Knative mounts it (`/var/lib/knative/certs`, in a private
 * mount namespace over a tmpfs, so the host's /var/lib is untouched). The function reaches the
 * apiserver (bound to the host's loopback) through a unix socket bridged to 127.0.0.1:<api port> inside
 * the pod. Ports are queue-proxy's fixed ones: 8012 HTTP, 8112 TLS, 8022 admin, 9090 autoscaler stats.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { spawnLogged, tailLog, type LoggedProcess } from '../../env/process.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const QUEUE_TLS_PORT = 8112;
export const QUEUE_STATS_PORT = 9090;
const USER_PORT = 8080;

export interface RevisionPodOptions {
  /** The pod's index: its /30 is 10.251.<subnet>.<4 index>. */
  readonly index: number;
  readonly subnet: number;
  readonly workDir: string;
  readonly queueProxy: string;
  readonly certPath: string;
  readonly keyPath: string;
  /** The apiserver's kubeconfig (server https://127.0.0.1:<port>) and that port. */
  readonly kubeconfigPath: string;
  readonly apiPort: number;
  /** The function's env beside PORT, HOST and KUBECONFIG. */
  readonly functionEnv: Record<string, string>;
  /** The Knative Service the pod is a revision of; `admission` unless given. */
  readonly service?: string;
  /** The user container's arguments to node (it serves 127.0.0.1:8080); `functions/<service>/index.ts` unless given. */
  readonly userContainer?: readonly string[];
  /** The revision's `containerConcurrency` (0: unlimited) and `timeoutSeconds`, as in the Knative Service; 100 and 15 unless given. */
  readonly containerConcurrency?: number;
  readonly timeoutSeconds?: number;
}

export interface RevisionPod {
  readonly name: string;
  readonly ip: string;
  readonly processes: readonly LoggedProcess[];
  /** Why a process of the pod has ended, with its log; undefined while all run. */
  exited(): string | undefined;
  stop(): Promise<void>;
}

/** In a fresh pod namespace: forwards 127.0.0.1:<port> to the host's unix socket (the apiserver). */
const BRIDGE_IN_POD = `require('node:net').createServer((c) => { const u = require('node:net').createConnection(process.argv[1]); c.pipe(u).pipe(c); c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); }).listen(Number(process.argv[2]), '127.0.0.1');`;

/** A pod's network namespace with the apiserver bridged in, and the processes run inside it. */
export interface PodNetwork {
  readonly ip: string;
  readonly processes: readonly LoggedProcess[];
  /** Runs a process inside the namespace, logging to `<workDir>/<netns>-<what>.log`. */
  readonly inPod: (what: string, args: string[], env: NodeJS.ProcessEnv) => LoggedProcess;
  readonly stop: () => Promise<void>;
}

/**
 * A network namespace of its own: a veth pair (the pod address on `eth0`, the host end holding the
 * other address of a /30, the default route through it) and 127.0.0.1:<api port> inside bridged to
 * the apiserver on the host's loopback.
 */
export async function startPodNetwork(o: Pick<RevisionPodOptions, 'index' | 'subnet' | 'workDir' | 'apiPort'>, name: string): Promise<PodNetwork> {
  const id = randomBytes(3).toString('hex');
  const netns = `kq-${id}`;
  const hostLink = `kqh-${id}`;
  const hostIp = `10.251.${o.subnet}.${4 * o.index + 1}`;
  const ip = `10.251.${o.subnet}.${4 * o.index + 2}`;
  await run('ip', ['netns', 'add', netns]);
  const processes: LoggedProcess[] = [];
  let bridge: Server | undefined;
  const stop = async (): Promise<void> => {
    await Promise.all(processes.map((p) => p.kill()));
    await new Promise<void>((resolve) => (bridge === undefined ? resolve() : bridge.close(() => resolve())));
    await run('ip', ['link', 'del', hostLink]).catch(() => undefined);
    await run('ip', ['netns', 'del', netns]).catch(() => undefined);
  };
  const inPod = (what: string, args: string[], env: NodeJS.ProcessEnv): LoggedProcess => {
    const p = spawnLogged(`${name} ${what}`, 'ip', ['netns', 'exec', netns, ...args], join(o.workDir, `${netns}-${what}.log`), { env, cwd: REPO });
    processes.push(p);
    return p;
  };
  try {
    await run('ip', ['link', 'add', hostLink, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
    await run('ip', ['addr', 'add', `${hostIp}/30`, 'dev', hostLink]);
    await run('ip', ['link', 'set', hostLink, 'up']);
    for (const args of [['addr', 'add', `${ip}/30`, 'dev', 'eth0'], ['link', 'set', 'eth0', 'up'], ['link', 'set', 'lo', 'up'], ['route', 'add', 'default', 'via', hostIp]]) {
      await run('ip', ['-n', netns, ...args]);
    }
    const socket = join(o.workDir, `${netns}-apiserver.sock`);
    bridge = createServer((c) => {
      const api = createConnection(o.apiPort, '127.0.0.1');
      c.pipe(api).pipe(c);
      c.on('error', () => api.destroy());
      api.on('error', () => c.destroy());
    });
    await new Promise<void>((resolve, reject) => bridge?.once('error', reject).listen(socket, resolve));
    inPod('bridge', [process.execPath, '-e', BRIDGE_IN_POD, socket, String(o.apiPort)], process.env);
  } catch (err: unknown) {
    await stop();
    throw err;
  }
  return { ip, processes, inPod, stop };
}

export async function startRevisionPod(o: RevisionPodOptions): Promise<RevisionPod> {
  const service = o.service ?? 'admission';
  const name = `${service}-00001-deployment-${randomBytes(3).toString('hex')}`;
  // queue-proxy drains for 30 s on SIGTERM (it waits for the endpoints to drop it): stop kills at once.
  const { ip, processes, inPod, stop } = await startPodNetwork(o, name);
  try {
    inPod('function', [process.execPath, '--import', 'tsx', ...(o.userContainer ?? [`functions/${service}/index.ts`])], {
      ...process.env,
      ...o.functionEnv,
      PORT: String(USER_PORT),
      HOST: '127.0.0.1',
      KUBECONFIG: o.kubeconfigPath,
    });
    const mountCerts = 'mount -t tmpfs tmpfs /var/lib && mkdir -p /var/lib/knative/certs && cp "$0" /var/lib/knative/certs/tls.crt && cp "$1" /var/lib/knative/certs/tls.key && exec "$2"';
    inPod('queue-proxy', ['unshare', '--mount', 'sh', '-c', mountCerts, o.certPath, o.keyPath, o.queueProxy], {
      PATH: process.env['PATH'],
      // As Knative's revision reconciler sets them (pkg/reconciler/revision/resources/queue.go).
      CONTAINER_CONCURRENCY: String(o.containerConcurrency ?? 100),
      QUEUE_SERVING_PORT: '8012',
      QUEUE_SERVING_TLS_PORT: String(QUEUE_TLS_PORT),
      USER_PORT: String(USER_PORT),
      REVISION_TIMEOUT_SECONDS: String(o.timeoutSeconds ?? 15),
      SERVING_LOGGING_CONFIG: '',
      SERVING_LOGGING_LEVEL: 'info',
      SERVING_NAMESPACE: 'd8-virtualization',
      SERVING_SERVICE: service,
      SERVING_CONFIGURATION: service,
      SERVING_REVISION: `${service}-00001`,
      SERVING_POD: name,
      SERVING_POD_IP: ip,
      SERVING_READINESS_PROBE: JSON.stringify({ httpGet: { path: '/health/readiness', port: USER_PORT, host: '127.0.0.1', scheme: 'HTTP' }, successThreshold: 1 }),
    });
  } catch (err: unknown) {
    await stop();
    throw err;
  }
  return {
    name,
    ip,
    processes,
    exited: () => {
      const gone = processes.find((p) => p.hasExited());
      return gone === undefined ? undefined : `${gone.name} exited; log ${gone.logPath}:\n${tailLog(gone.logPath)}`;
    },
    stop,
  };
}

/** An HTTPS GET through the pod's queue-proxy TLS port, as `serverName`, trusting `ca`: the status. */
export function getThroughQueueProxy(pod: RevisionPod, path: string, ca: Buffer, serverName: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: pod.ip, port: QUEUE_TLS_PORT, path, ca, servername: serverName, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject).end();
  });
}

/** Knative's autoscaler metric of one pod (knative.dev/serving pkg/autoscaler/metrics/stat.proto). */
export interface Stat {
  podName: string;
  averageConcurrentRequests: number;
  averageProxiedConcurrentRequests: number;
  requestCount: number;
  proxiedRequestCount: number;
  processUptime: number;
  timestamp: number;
}

/** Decodes a protobuf `metrics.Stat` (proto3: a string, five doubles and an int64). */
export function decodeStat(buf: Buffer): Stat {
  const stat: Stat = { podName: '', averageConcurrentRequests: 0, averageProxiedConcurrentRequests: 0, requestCount: 0, proxiedRequestCount: 0, processUptime: 0, timestamp: 0 };
  const doubles = ['', '', 'averageConcurrentRequests', 'averageProxiedConcurrentRequests', 'requestCount', 'proxiedRequestCount', 'processUptime'] as const;
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = buf[at++];
      if (byte === undefined) throw new Error('Stat: truncated varint');
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (field === 1 && wire === 2) {
      const len = varint();
      stat.podName = buf.toString('utf8', at, at + len);
      at += len;
    } else if (field >= 2 && field <= 6 && wire === 1) {
      stat[doubles[field] as Exclude<(typeof doubles)[number], ''>] = buf.readDoubleLE(at);
      at += 8;
    } else if (field === 7 && wire === 0) {
      stat.timestamp = varint();
    } else {
      throw new Error(`Stat: unexpected field ${field} (wire type ${wire}) at byte ${at}`);
    }
  }
  return stat;
}

/** What the autoscaler scrapes: `GET http://<pod>:9090/metrics`, protobuf. */
export function scrapeStat(pod: RevisionPod): Promise<Stat> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: pod.ip, port: QUEUE_STATS_PORT, path: '/metrics', headers: { accept: 'application/protobuf' }, timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          if (res.statusCode !== 200) throw new Error(`stats of ${pod.name}: HTTP ${res.statusCode}`);
          resolve(decodeStat(Buffer.concat(chunks)));
        } catch (err: unknown) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject).end();
  });
}
