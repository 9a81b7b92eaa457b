/**
 * The kubelet plugin: the DRA service (v1 and v1beta1, one handler) on
 * `<pluginsDir>/<driver>/dra.sock`, then the registration service on
 * `<registryDir>/<driver>-reg.sock`, which kubelet discovers by inotify. A stale socket file left by a
 * killed process is removed before binding; on close the registration socket goes first (kubelet
 * deregisters the plugin), then the DRA socket.
 */
import { Server, ServerCredentials, status, type ServiceError, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { lstat, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../../shared/log/index.js';
import type { DraMetrics } from '../metrics.js';
import type { Preparer } from './prepare.js';
import { DRA_VERSIONS, SUPPORTED_VERSIONS, kubeletProtos, type Claim } from './protos.js';

export interface PluginOptions {
  driver: string;
  pluginsDir: string;
  registryDir: string;
  preparer: Preparer;
  log: Logger;
  metrics?: DraMetrics;
}

export interface KubeletPlugin {
  readonly draSocket: string;
  readonly registrationSocket: string;
  /** What kubelet last told in NotifyRegistrationStatus (undefined: not yet). */
  registered(): boolean | undefined;
  close(): Promise<void>;
}

export function pluginSockets(driver: string, pluginsDir: string, registryDir: string): { draSocket: string; registrationSocket: string } {
  return { draSocket: join(pluginsDir, driver, 'dra.sock'), registrationSocket: join(registryDir, `${driver}-reg.sock`) };
}

/** Remove a stale socket (or other non-directory) left at `path`. */
export async function removeStaleSocket(path: string, log: Logger): Promise<void> {
  try {
    const st = await lstat(path);
    if (st.isDirectory()) throw new Error(`${path} is a directory, not a socket`);
    await rm(path, { force: true });
    log.info({ path }, 'removed a stale socket file');
  } catch (err: unknown) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

async function bind(server: Server, path: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${path}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
}

async function shutdown(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, 5_000);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

interface ClaimsRequest {
  claims?: Claim[] | null;
}

export async function startKubeletPlugin(opts: PluginOptions): Promise<KubeletPlugin> {
  const { draSocket, registrationSocket } = pluginSockets(opts.driver, opts.pluginsDir, opts.registryDir);
  const protos = kubeletProtos();
  const log = opts.log.child({ component: 'kubelet-plugin' });
  await mkdir(join(opts.pluginsDir, opts.driver), { recursive: true, mode: 0o750 });
  await mkdir(opts.registryDir, { recursive: true });
  await removeStaleSocket(draSocket, log);
  await removeStaleSocket(registrationSocket, log);

  const unary =
    (method: string, version: string, fn: (claims: readonly Claim[]) => Promise<unknown>) =>
    (call: { request: ClaimsRequest }, callback: (err: ServiceError | null, value?: unknown) => void): void => {
      const started = performance.now();
      const claims = call.request.claims ?? [];
      fn(claims).then(
        (result) => {
          opts.metrics?.rpcs.inc({ method, version, result: 'ok' });
          opts.metrics?.rpcDuration.observe({ method }, (performance.now() - started) / 1000);
          callback(null, { claims: result });
        },
        (err: unknown) => {
          opts.metrics?.rpcs.inc({ method, version, result: 'error' });
          log.error({ err, method, version }, 'kubelet call failed as a whole');
          callback({ name: 'Error', message: (err as Error).message, code: status.INTERNAL, details: (err as Error).message, metadata: undefined as never });
        },
      );
    };

  const dra = new Server();
  for (const version of DRA_VERSIONS) {
    const handlers: UntypedServiceImplementation = {
      NodePrepareResources: unary('NodePrepareResources', version, (c) => opts.preparer.prepare(c)),
      NodeUnprepareResources: unary('NodeUnprepareResources', version, (c) => opts.preparer.unprepare(c)),
    };
    dra.addService(protos.k8s.io.kubelet.pkg.apis.dra[version].DRAPlugin.service, handlers);
  }
  await bind(dra, draSocket);

  let registered: boolean | undefined;
  const registration = new Server();
  registration.addService(protos.pluginregistration.Registration.service, {
    GetInfo: (_call: unknown, callback: (err: null, value: unknown) => void) => {
      callback(null, { type: 'DRAPlugin', name: opts.driver, endpoint: draSocket, supported_versions: SUPPORTED_VERSIONS });
    },
    NotifyRegistrationStatus: (call: { request: { plugin_registered?: boolean; error?: string } }, callback: (err: null, value: unknown) => void) => {
      registered = call.request.plugin_registered === true;
      if (registered) log.info('kubelet registered the plugin');
      else log.error({ error: call.request.error }, 'kubelet refused to register the plugin');
      callback(null, {});
    },
  });
  try {
    await bind(registration, registrationSocket);
  } catch (err: unknown) {
    await shutdown(dra);
    throw err;
  }
  log.info({ draSocket, registrationSocket, versions: SUPPORTED_VERSIONS }, 'kubelet plugin serving');

  return {
    draSocket,
    registrationSocket,
    registered: () => registered,
    close: async () => {
      await rm(registrationSocket, { force: true });
      await shutdown(registration);
      await shutdown(dra);
      await rm(draSocket, { force: true });
    },
  };
}
