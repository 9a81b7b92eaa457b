/**
 * Fixtures for the controller's integration tests: the controller in-process against the test
 * apiserver (scoped to one namespace and to cluster objects labelled for the test), object builders,
 * the scripted parts of the world the controller does not own (disk and image readiness, nodes), and
 * polling.
 */
import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { NotFoundError } from '../../../shared/errors/index.js';
import * as addresses from '../../../shared/api/resources/addresses.js';
import { KubeClient, descriptorOf, type ResourceClient } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { loadConfig, type ControllerConfig } from '../../../daemons/controller/config.js';
import { startController, type RunningController, type StartOptions } from '../../../daemons/controller/controller.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { ControllerMetrics } from '../../../daemons/controller/metrics/runtime.js';
import { newKubeConfig } from '../../env/index.js';
import { controllerEnv, testClients, TEST_FIELD_MANAGER, type Scope } from './scope.js';

export { SCOPE_LABEL, newScope, controllerEnv, testClients, TEST_FIELD_MANAGER, type Scope } from './scope.js';

export function mainKube(): KubeClient {
  return new KubeClient(newKubeConfig());
}

/** VirtualMachineMACAddresses through the test's client (the MAC suites' objects). */
export const macAddresses = (): ResourceClient<addresses.VirtualMachineMACAddress> =>
  mainKube().resource(descriptorOf(addresses.virtualMachineMACAddress), addresses.VirtualMachineMACAddressSchema, TEST_FIELD_MANAGER);

/** VirtualMachineMACAddressLeases through the test's client. */
export const macLeases = (): ResourceClient<addresses.VirtualMachineMACAddressLease> =>
  mainKube().resource(descriptorOf(addresses.virtualMachineMACAddressLease), addresses.VirtualMachineMACAddressLeaseSchema, TEST_FIELD_MANAGER);

/** Controller config for a scope, as the environment would give it (scope.ts: controllerEnv). */
export function controllerConfig(scope: Scope, env: Record<string, string> = {}): ControllerConfig {
  return loadConfig(controllerEnv(scope, env));
}

export interface TestController {
  running: RunningController;
  metrics: ControllerMetrics;
  stop(): Promise<void>;
}

/** The controller's reconcilers in this process, caches synced. Stop it in afterEach. */
/** Start options a test may set beyond the environment: USB on or off, the hot-plug ports. */
export type TestStartOptions = Partial<Pick<StartOptions, 'usb' | 'claims' | 'hotplug' | 'macRandom'>>;

export async function startTestController(
  kube: KubeClient,
  scope: Scope,
  env: Record<string, string> = {},
  options: TestStartOptions = {},
): Promise<TestController> {
  const abort = new AbortController();
  const metrics = new ControllerMetrics();
  const running = await startController({ kube, config: controllerConfig(scope, env), signal: abort.signal, metrics, ...options });
  return {
    running,
    metrics,
    stop: async () => {
      abort.abort();
      await running.stop();
    },
  };
}

/**
 * How long a controller test waits for a condition unless it says otherwise: generous, since it only
 * bounds how long a real failure takes to show. 30 s (waitFor's default) was once too short for an
 * AlwaysOff VM to reach Stopped in a full run under `stress-ng --cpu 2` (daemon.test, 2026-12-07).
 */
export const EVENTUALLY_MS = 120_000;

/**
 * Poll until `check` returns a value (not undefined/false/null/0/''); returns it. The tests' one wait
 * helper (shared/testing/wait.ts) in the argument order of these tests.
 */
export function eventually<T>(check: () => T | Promise<T>, what: string, timeoutMs = EVENTUALLY_MS): Promise<Exclude<T, undefined | null | false | 0 | ''>> {
  return waitFor(what, check, { timeoutMs });
}

/** A check that an object (VM, disk, image, ...) is in `phase`. */
export const phaseIs =
  (phase: string) =>
  <T extends { status?: { phase?: string | undefined } | undefined }>(obj: T): boolean =>
    obj.status?.phase === phase;

/** What `get` reads once `check` holds for it, polled as `eventually` (the objects' one wait in these tests). */
export async function readWhen<T>(get: () => Promise<T>, check: (obj: T) => boolean, what: string, timeoutMs?: number): Promise<T> {
  const found = await eventually(
    async () => {
      const obj = await get();
      return check(obj) && { obj };
    },
    what,
    timeoutMs,
  );
  return found.obj;
}

export type { ControllerConfig };

export interface ClusterHandle {
  readonly kube: KubeClient;
  readonly c: Clients;
  /** Run after the current test, last registered first. */
  onCleanup(fn: () => Promise<unknown>): void;
}

/** One apiserver client for the test file (closed after it) and clean-ups after each test. */
export function useCluster(): ClusterHandle {
  let kube: KubeClient | undefined;
  let c: Clients | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeAll(() => {
    kube = mainKube();
    c = testClients(kube);
  });
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });
  afterAll(() => kube?.close());
  return {
    get kube(): KubeClient {
      if (kube === undefined) throw new Error('useCluster: used before beforeAll');
      return kube;
    },
    get c(): Clients {
      if (c === undefined) throw new Error('useCluster: used before beforeAll');
      return c;
    },
    onCleanup: (fn) => void cleanups.push(fn),
  };
}

/** Whether reading the object answers 404. */
export async function gone(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return false;
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return true;
    throw err;
  }
}
