/**
 * The apiserver behind the proxy: its URL, one keep-alive agent with the kubeconfig's CA and client
 * certificate, and the bearer token (re-read every 10 s so rotated service-account tokens are used).
 * The proxy speaks with this identity; a client's own Authorization header is not forwarded.
 */
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { applyCredentials } from '../../shared/kube/kubeconfig.js';

export interface UpstreamTarget {
  readonly url: URL;
  readonly agent: http.Agent;
  /** Headers to add to every request (Authorization), as last read. */
  authHeaders(): http.OutgoingHttpHeaders;
  request(options: http.RequestOptions): http.ClientRequest;
  close(): void;
}

const REFRESH_MS = 10_000;

/** The key of every pooled connection: one agent serves one origin with one set of TLS options. */
const POOL_KEY = 'apiserver';

/**
 * Node's https agent builds its pool key per call from the host and the CA, certificate and key PEMs
 * (several KB) and looks the pools up with it, two or three times a request (measured about 10 µs a
 * call). Every request through this agent goes to one origin with the same TLS options (requests
 * elsewhere, upgrades, use their own `agent: false`), so one constant key is exact.
 */
function withConstantPoolKey<A extends http.Agent>(agent: A): A {
  agent.getName = (): string => POOL_KEY;
  return agent;
}

export async function upstreamFromKubeConfig(kc: KubeConfig): Promise<UpstreamTarget> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(cluster.server);
  const read = async (): Promise<https.RequestOptions> => {
    const options: https.RequestOptions = {};
    await applyCredentials(kc, options);
    return options;
  };
  const first = await read();
  const secure = url.protocol === 'https:';
  // The agent hands its options to each socket it opens; Node's types leave the socket's noDelay out of AgentOptions.
  const agentOptions: https.AgentOptions & Pick<net.SocketConstructorOpts, 'noDelay'> = {
    keepAlive: true,
    maxFreeSockets: 256,
    scheduling: 'lifo',
    noDelay: true,
  };
  if (first.ca !== undefined) agentOptions.ca = first.ca;
  if (first.cert !== undefined) agentOptions.cert = first.cert;
  if (first.key !== undefined) agentOptions.key = first.key;
  if (first.rejectUnauthorized !== undefined) agentOptions.rejectUnauthorized = first.rejectUnauthorized;
  if (first.servername !== undefined) agentOptions.servername = first.servername;
  const agent = withConstantPoolKey(secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions));
  let current = { at: Date.now(), headers: authOnly(first) };
  let refreshing: Promise<void> | undefined;
  const prefix = url.pathname.replace(/\/+$/, '');
  const { protocol, hostname, port } = url;
  return {
    url,
    agent,
    authHeaders(): http.OutgoingHttpHeaders {
      // Never waits: a stale token is refreshed in the background and used from the next request on.
      if (Date.now() - current.at >= REFRESH_MS && refreshing === undefined) {
        refreshing = read()
          .then((o) => {
            current = { at: Date.now(), headers: authOnly(o) };
          })
          .catch(() => {
            current = { ...current, at: Date.now() };
          })
          .finally(() => (refreshing = undefined));
      }
      return current.headers;
    },
    request(options: http.RequestOptions): http.ClientRequest {
      const base = { protocol, hostname, port, agent, ...options };
      if (prefix !== '' && options.path !== undefined) base.path = prefix + (options.path ?? '');
      return secure ? https.request(base) : http.request(base);
    },
    close: () => agent.destroy(),
  };
}

function authOnly(options: https.RequestOptions): http.OutgoingHttpHeaders {
  const headers = (options.headers ?? {}) as Record<string, unknown>;
  const bearer = headers.Authorization ?? headers.authorization;
  if (typeof bearer === 'string') return { authorization: bearer };
  if (typeof options.auth === 'string') return { authorization: `Basic ${Buffer.from(options.auth).toString('base64')}` };
  return {};
}
