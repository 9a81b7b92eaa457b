/**
 * What the platform's start steps share: the options, the supervisor of every process, and what is
 * to be stopped (last started first), whichever way the platform started (start-local.ts,
 * start-against.ts, start-units.ts).
 */
import { join } from 'node:path';
import type { KubeClient } from '../shared/kube/index.js';
import { tailLog, type LoggedProcess } from '../tests/env/process.js';
import type { ModuleConfigTriggers } from './eventing.js';
import type { PlatformFlags } from './flags.js';
import type { ServiceAccountTokens } from './identities.js';
import type { Kubectl } from './install.js';
import type { LocalRouteForge } from './route-forge.js';
import type { SecretFiles } from './secret-files.js';
import { Supervisor } from './supervisor.js';
import { statusOf, type Bundles } from './units.js';
import type { WebhookRoute } from './webhook-wiring.js';
import { waitFor } from '../shared/testing/wait.js';

export const ADMISSION_SERVICE = 'admission-webhook';
export const ADMISSION_SECRET = 'admission-tls';
/** The importer program, bundled like the units: the storage simulator runs it for each helper pod. */
export const IMPORTER_ENTRY = 'daemons/importer/main.ts';
export const UNIT_ENTRIES = [
  'daemons/controller/main.ts',
  'functions/audit/index.ts',
  'functions/admission/index.ts',
  'platform/simulators/kubevirt-simulator/main.ts',
  'functions/pre-delete/index.ts',
  'daemons/api-rewriter/main.ts',
  'daemons/route-forge/main.ts',
  'daemons/dra/main.ts',
  'functions/subresources/index.ts',
  'platform/simulators/storage-simulator/main.ts',
  IMPORTER_ENTRY,
];

export interface PlatformOptions {
  flags: PlatformFlags;
  binDir: string;
  workDir: string;
  /** A status line for the person watching (before the live view takes the screen). */
  say: (line: string) => void;
}

export interface RunningPlatform {
  readonly local: boolean;
  readonly server: string;
  readonly adminKubeconfig: string;
  readonly admin: KubeClient;
  readonly kubectl: Kubectl;
  /** kubectl as a user of the role model: a client certificate locally, impersonation on a given cluster. */
  userKubectl(name: string): Promise<Kubectl>;
  /** The audit function's output (records are its `{"type":...}` lines). */
  readonly auditLog: string;
  readonly units: Readonly<Record<string, LoggedProcess>>;
  /** Which KubeVirt runs (real or simulated, and why), for the live view; unset against a given cluster. */
  readonly kubevirt?: string;
}

/** The platform's processes and the resources to release, filled in as the start steps make them. */
export class Parts {
  readonly supervisor: Supervisor;
  tokens: ServiceAccountTokens | undefined;
  secretFiles: SecretFiles | undefined;
  subresourcesTls: SecretFiles | undefined;
  virtApiClientTls: SecretFiles | undefined;
  usbipSecret: SecretFiles | undefined;
  admin: KubeClient | undefined;
  bundles: Bundles | undefined;
  route: WebhookRoute | undefined;
  triggers: ModuleConfigTriggers | undefined;
  sourceKube: KubeClient | undefined;
  routeForge: LocalRouteForge | undefined;
  kubevirtMode: string | undefined;

  constructor(readonly o: PlatformOptions) {
    this.supervisor = new Supervisor(join(o.workDir, 'platform.json'));
  }

  /** Stop every unit and process, last started first. */
  async stop(onStep: (name: string) => void = () => undefined): Promise<void> {
    this.tokens?.stop();
    this.secretFiles?.stop();
    this.subresourcesTls?.stop();
    this.virtApiClientTls?.stop();
    this.usbipSecret?.stop();
    await this.triggers?.stop();
    await this.route?.stop();
    try {
      await this.supervisor.stopAll(10_000, onStep);
    } finally {
      await this.routeForge?.stop();
    }
    this.sourceKube?.close();
    this.admin?.close();
    await this.bundles?.remove();
  }
}

/** Whether the unit on `port` answers its readiness probe. */
export async function answers(port: number | undefined, scheme: 'http' | 'https'): Promise<boolean> {
  return port !== undefined && (await statusOf(`${scheme}://127.0.0.1:${port}/health/readiness`)) === 200;
}

/** The port a unit started with port 0 has bound, once it says so in its log. */
export async function portOf(proc: LoggedProcess, read: () => number | undefined): Promise<number> {
  let port: number | undefined;
  await waitFor(`${proc.name} listening`, () => Promise.resolve((port = read()) !== undefined), {
    timeoutMs: 120_000,
    intervalMs: 100,
    abortIf: () => (proc.hasExited() ? `${proc.name} exited while starting; its log ${proc.logPath} ends with:\n${tailLog(proc.logPath, 15)}` : undefined),
  });
  return port ?? 0;
}
