/**
 * kubevirt-simulator, the composition root: plays KubeVirt's part on the internal objects for a
 * machine without KubeVirt (the local platform of `npm start`). Never part of the install. Exit codes:
 * 0 after SIGTERM/SIGINT, 2 for invalid config, 1 for anything else.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaemonIfMain } from '../../../shared/daemon/main.js';
import { untilAborted, type KubeClient } from '../../../shared/kube/index.js';
import { ConfigError } from '../../../shared/errors/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { loadConfig, type SimulatorConfig } from './config.js';
import { KubeVirtSimulator } from './simulator.js';
import { simulatorClients } from './kube.js';
import { findQemu, GuestBackend } from './qemu/backend.js';
import { EvictionInterceptor } from './virt-api/eviction-interceptor.js';
import { VirtApiStandIn } from './virt-api/virt-api-stand-in.js';
import { kubevirtVolumes } from './virt-api/volumes.js';
import { simulatedFreeze, withSimulatedGuests, type SimulatedFreeze } from './virt-handler/fs-freeze.js';

/**
 * The virt-api stand-in, when configured (VIRT_API_PORT): freeze and thaw reach a real guest's agent,
 * or a simulated guest's (its instance's fsFreezeStatus, `virt-handler/fs-freeze.ts`).
 */
async function virtApiStandIn(
  config: SimulatorConfig,
  kube: KubeClient,
  guests: GuestBackend | undefined,
  frozen: SimulatedFreeze,
): Promise<VirtApiStandIn | undefined> {
  if (config.VIRT_API_PORT === undefined) return undefined;
  const { VIRT_API_TLS_CERT_FILE: certFile, VIRT_API_TLS_KEY_FILE: keyFile, VIRT_API_CLIENT_CA_FILE: caFile } = config;
  const tls =
    certFile !== undefined && keyFile !== undefined && caFile !== undefined
      ? { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8'), clientCa: '' }
      : undefined;
  const standIn = new VirtApiStandIn({
    port: config.VIRT_API_PORT,
    host: config.VIRT_API_HOST,
    // The client CA is followed in its file: in npm start it is the module CA, issued after the start.
    ...(tls === undefined ? {} : { tls, clientCaFile: caFile }),
    log: rootLogger.child({ component: 'virt-api-stand-in' }),
    volumes: kubevirtVolumes(simulatorClients(kube).kvvmis, { realGuest: (ns, name) => guests?.byVm(ns, name)?.running === true }),
    guests: withSimulatedGuests(guests, frozen),
  });
  await standIn.start();
  return standIn;
}

/** The real guests' backend (QEMU_GUESTS), or undefined for simulated guests. */
async function guestBackend(config: SimulatorConfig): Promise<GuestBackend | undefined> {
  if (config.QEMU_GUESTS === 'off') return undefined;
  const log = rootLogger.child({ component: 'guests' });
  const qemu = await findQemu();
  if (qemu === undefined) {
    if (config.QEMU_GUESTS === 'on') throw new Error('QEMU_GUESTS=on, but qemu-system-x86_64 is not on PATH (Debian: apt-get install qemu-system-x86)');
    log.info('qemu-system-x86_64 is not installed: guests are simulated');
    return undefined;
  }
  const workDir = config.GUEST_WORK_DIR ?? (await mkdtemp(join(tmpdir(), 'kubevirt-simulator-guests-')));
  const backend = new GuestBackend({
    qemu,
    workDir,
    memoryCapMiB: config.GUEST_MEMORY_CAP_MIB,
    shutdownGraceMs: config.GUEST_SHUTDOWN_GRACE,
    accel: config.GUEST_ACCEL,
    migrationBandwidth: config.GUEST_MIGRATION_BANDWIDTH_MIB * 1024 * 1024,
    hostReserveMiB: config.GUEST_HOST_RESERVE_MIB,
    log,
  });
  log.info({ qemu, workDir, memoryCapMiB: config.GUEST_MEMORY_CAP_MIB, accel: config.GUEST_ACCEL }, 'real guests: every running instance is a QEMU process');
  return backend;
}

/** virt-api's eviction interceptor, when configured (EVICTION_WEBHOOK_PORT); the apiserver calls it over HTTPS only. */
async function evictionInterceptor(config: SimulatorConfig, kube: KubeClient): Promise<EvictionInterceptor | undefined> {
  if (config.EVICTION_WEBHOOK_PORT === undefined) return undefined;
  const { VIRT_API_TLS_CERT_FILE: certFile, VIRT_API_TLS_KEY_FILE: keyFile } = config;
  if (certFile === undefined || keyFile === undefined) {
    throw new ConfigError('invalid configuration', [
      { path: 'EVICTION_WEBHOOK_PORT', message: 'needs VIRT_API_TLS_CERT_FILE and VIRT_API_TLS_KEY_FILE: the apiserver calls webhooks over HTTPS only' },
    ]);
  }
  const interceptor = new EvictionInterceptor({
    clients: simulatorClients(kube),
    clusterStrategy: config.EVICTION_STRATEGY,
    tls: { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') },
    host: config.VIRT_API_HOST,
    port: config.EVICTION_WEBHOOK_PORT,
    log: rootLogger.child({ component: 'eviction-interceptor' }),
  });
  await interceptor.start();
  return interceptor;
}

runDaemonIfMain(import.meta.url, 'kubevirt simulator', loadConfig, async ({ config, kube, signal }) => {
  const guests = await guestBackend(config);
  const simulator = new KubeVirtSimulator(kube, {
    guests,
    role: config.ROLE,
    namespace: config.WATCH_NAMESPACE,
    launcherPods: config.LAUNCHER_PODS,
    labelNodes: config.NODE_LABELLER,
    autoRunOn: config.AUTO_RUN_NODE,
    bootDelayMs: config.GUEST_BOOT_DELAY,
    migrationDelayMs: config.MIGRATION_DELAY,
    unschedulableTimeoutMs: config.MIGRATION_UNSCHEDULABLE_TIMEOUT,
  });
  const frozen = simulatedFreeze(simulatorClients(kube).kvvmis, rootLogger.child({ component: 'virt-handler-freeze' }));
  const virtApi = await virtApiStandIn(config, kube, guests, frozen);
  const interceptor = await evictionInterceptor(config, kube);
  try {
    await simulator.start();
    await untilAborted(signal);
  } finally {
    await interceptor?.stop();
    await virtApi?.stop();
    frozen.stop();
    await simulator.stop();
    await guests?.stopAll();
  }
  return 0;
});
