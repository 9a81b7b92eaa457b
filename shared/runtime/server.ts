import { createServer as createHttpServer, type Server, type RequestListener } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { metricsGuardFromEnv } from '../authz/index.js';
import { listen } from '../http/listen.js';
import { childLogger, type Logger } from '../log/index.js';
import { Registry } from '../metrics/index.js';
import { buildApp } from './app.js';
import { loadStartConfig, type Env, type HostConfig } from './config.js';
import { Drain } from './drain.js';
import { DefinitionError } from './errors.js';
import { answerClientError } from './http/client-error.js';
import { serveUpgrades } from './http/upgrade.js';
import { shutdown, type ShutdownReport } from './lifecycle.js';
import { TlsReloader, type TlsFiles } from './tls.js';
import type { FunctionContext, FunctionDefinition } from './types.js';

export interface ServeOptions {
  /** Where configuration is read from; `process.env` unless given (tests pass their own). */
  readonly env?: Env;
  /** Parent of the function's logger; the root logger unless given. */
  readonly logger?: Logger;
}

export interface ServerHandle {
  /** The bound port (useful with PORT=0). */
  readonly port: number;
  /** A loopback URL for the server, `http://` or `https://`. */
  readonly url: string;
  readonly metrics: Registry;
  /** Drain and stop (idempotent): the same as SIGTERM, without exiting the process. */
  close(): Promise<ShutdownReport>;
}

/**
 * Start a function: parse config (one ConfigError listing every problem), run `init`, listen (an
 * address it cannot bind: a ListenError, "function NAME cannot listen on HOST:PORT: ..."). The
 * returned handle closes it the way SIGTERM does.
 */
export async function serve<C extends z.ZodObject, S>(def: FunctionDefinition<C, S>, options: ServeOptions = {}): Promise<ServerHandle> {
  if (def.handle === undefined && (def.routes ?? []).length === 0) {
    throw new DefinitionError(`function ${def.name} declares neither handle nor routes`);
  }
  const config = loadStartConfig(def.config, options.env ?? process.env);
  const log = childLogger({ component: def.name }, options.logger);
  if (config.host.LOG_LEVEL !== undefined) log.level = config.host.LOG_LEVEL;
  const metrics = new Registry({ processMetrics: true });
  const base = { name: def.name, config: config.fn, log, metrics };
  // Without init there is no state; the declaration's S is then `undefined` by convention.
  const state = def.init === undefined ? (undefined as S) : await def.init(base);
  const ctx: FunctionContext<z.infer<C>, S> = { ...base, state };
  const drain = new Drain();
  let tls: TlsReloader | undefined;
  const tlsStatus = (): string | undefined => {
    const status = tls?.status();
    return status === undefined || status.ok ? undefined : `TLS: ${status.reason}`;
  };
  const metricsGuard = metricsGuardFromEnv(config.host, options.env ?? process.env, log);
  const app = buildApp({ def, ctx, host: config.host, drain, metrics, tlsStatus, metricsGuard });
  const server = createServer(config.host, config.tls, app, def.clientCertificates === 'request');
  if (def.upgrade !== undefined) serveUpgrades(server, def.upgrade, ctx, drain);
  if (config.tls !== undefined) {
    tls = new TlsReloader(config.tls, server as HttpsServer, log);
    await tls.start();
  }
  const deadlineMs = config.host.DRAIN_TIMEOUT_MS;
  let closing: Promise<ShutdownReport> | undefined;
  const close = (): Promise<ShutdownReport> => {
    tls?.stop();
    return (closing ??= shutdown({ def, ctx, server, drain, deadlineMs }).finally(() => metricsGuard?.close()));
  };
  const port = await listen(server, config.host.HOST, config.host.PORT, `function ${def.name}`).catch(async (err: unknown) => {
    await close();
    throw err;
  });
  const url = `${config.tls === undefined ? 'http' : 'https'}://${loopbackName(server.address() as AddressInfo)}:${port}`;
  log.info({ port, url, tls: config.tls !== undefined }, 'listening');
  return { port, url, metrics, close };
}

/**
 * Plain HTTP, or HTTPS whose certificate the TlsReloader supplies (no handshake before it does);
 * `askClientCerts` requests (never requires or verifies) client certificates.
 */
function createServer(host: HostConfig, tls: TlsFiles | undefined, app: RequestListener, askClientCerts: boolean): Server {
  const timeouts = {
    requestTimeout: host.REQUEST_TIMEOUT_MS,
    headersTimeout: host.REQUEST_TIMEOUT_MS === 0 ? 60_000 : Math.min(60_000, host.REQUEST_TIMEOUT_MS),
    keepAliveTimeout: host.KEEP_ALIVE_TIMEOUT_MS,
  };
  const server: Server =
    tls === undefined
      ? createHttpServer(timeouts, app)
      : createHttpsServer({ ...timeouts, ...(askClientCerts ? { requestCert: true, rejectUnauthorized: false } : {}) }, app);
  server.on('clientError', answerClientError);
  return server;
}

function loopbackName(address: AddressInfo): string {
  if (address.address === '0.0.0.0') return '127.0.0.1';
  if (address.address === '::') return '[::1]';
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}
