/**
 * KubeVirt in `npm start`. With the binaries built (tests/env/build-kubevirt.sh) it is real:
 * upstream virt-api and virt-controller as supervised local processes behind an api-rewriter of their
 * own (unit `kubevirt-api-rewriter`, ServiceAccount `kubevirt-components`, kubevirt-rbac.yaml, with
 * the webhook proxy virt-api's admission webhooks go through), set up by platform/kubevirt.ts, and
 * the KubeVirt simulator plays only virt-handler (ROLE=node-agent). Without them the simulator plays
 * both virt-controller and virt-handler, and the platform says how to build the binaries.
 */
import { join } from 'node:path';
import { KUBEVIRT_SCRIPT, KUBEVIRT_VERSION, locateKubeVirtBinaries } from '../tests/env/binaries.js';
import { freePort } from '../tests/env/ports.js';
import type { LoggedProcess } from '../tests/env/process.js';
import type { Kubectl } from './install.js';
import { applyKubeVirtConfiguration, KUBEVIRT_NAMESPACE, planKubeVirt, rewriterWebhookEnv, startKubeVirt, writeRewriterKubeconfig } from './kubevirt.js';
import { answers, type Parts } from './parts.js';
import { REPO_ROOT, waitReady, type UnitSpec } from './units.js';

/** The real components' identity on the local platform (not part of the install). */
export const KUBEVIRT_RBAC = join(REPO_ROOT, 'platform/kubevirt-rbac.yaml');
export const KUBEVIRT_ACCOUNT = 'kubevirt-components';
export const KUBEVIRT_REWRITER = 'kubevirt-api-rewriter';

/** Which KubeVirt runs: real (where its binaries are) or simulated (why, and how to build them). */
export type KubeVirtMode = { readonly real: true; readonly binDir: string } | { readonly real: false; readonly why: string };

export function kubeVirtMode(env: NodeJS.ProcessEnv = process.env): KubeVirtMode {
  const { dir, missing } = locateKubeVirtBinaries(env);
  if (missing.length === 0) return { real: true, binDir: dir };
  return {
    real: false,
    why: `${missing.join(' and ')} not built in ${dir}; build them with \`bash ${KUBEVIRT_SCRIPT.replace(REPO_ROOT, '')}\` (about 8 minutes cold on 2 cores, from the Go module proxy)`,
  };
}

/** The one line the platform prints (and the live view shows) about the mode. */
export function describeMode(mode: KubeVirtMode): string {
  return mode.real
    ? `KubeVirt: REAL virt-controller and virt-api v${KUBEVIRT_VERSION} (${mode.binDir}) behind ${KUBEVIRT_REWRITER}; the simulator plays only virt-handler (node agent)`
    : `KubeVirt: SIMULATED (virt-controller and virt-handler by the simulator): ${mode.why}`;
}

/** KubeVirt's side of the units: what runs beside the simulator, and how the simulator and the controller are set for it. */
export interface KubeVirtSide {
  /** The api-rewriter in front of virt-api and virt-controller (a Node unit like ours); none when simulated. */
  readonly specs: readonly UnitSpec[];
  /** The controller reads KubeVirt's configuration where KubeVirt does. */
  readonly controllerEnv: Readonly<Record<string, string>>;
  /** The simulator's ROLE: only virt-handler's part beside real virt-controller. */
  readonly simulatorRole: 'all' | 'node-agent';
  /** Once the rewriter unit (among `started`) is ready: configuration, virt-api, virt-controller, webhooks; the two processes by name. */
  startBeside(started: readonly { spec: UnitSpec; proc: LoggedProcess }[]): Promise<Record<string, LoggedProcess>>;
}

const SIMULATED: KubeVirtSide = { specs: [], controllerEnv: {}, simulatorRole: 'all', startBeside: () => Promise.resolve({}) };

/** Real KubeVirt when the simulator runs and `kubevirt` says real; the simulator plays it all otherwise. */
export async function kubeVirtSide(
  p: Parts,
  o: { simulator: boolean; kubevirt?: { mode: KubeVirtMode; kubectl: Kubectl } | undefined },
  tokens: { kubeconfigFor(sa: string): Promise<string> },
  logDir: string,
): Promise<KubeVirtSide> {
  const mode = o.kubevirt?.mode;
  if (!o.simulator || o.kubevirt === undefined || mode?.real !== true) return SIMULATED;
  const kubeconfig = await tokens.kubeconfigFor(KUBEVIRT_ACCOUNT);
  return realKubeVirtUnits(p, { binDir: mode.binDir, kubectl: o.kubevirt.kubectl, kubeconfig, logDir });
}

/** Plan the real components: certificates, ports, the rewriter unit; `kubeconfig` is the ServiceAccount's. */
async function realKubeVirtUnits(p: Parts, o: { binDir: string; kubectl: Kubectl; kubeconfig: string; logDir: string }): Promise<KubeVirtSide> {
  const dir = join(p.o.workDir, 'kubevirt');
  const plan = await planKubeVirt(dir);
  const ports = { proxy: await freePort(), health: await freePort() };
  const rewriterKubeconfig = await writeRewriterKubeconfig(join(dir, 'via-rewriter.kubeconfig'), `http://127.0.0.1:${ports.proxy}`);
  const rewriter: UnitSpec = {
    name: KUBEVIRT_REWRITER,
    entry: 'daemons/api-rewriter/main.ts',
    env: {
      KUBECONFIG: o.kubeconfig,
      PROXY_PORT: String(ports.proxy),
      HEALTH_PORT: String(ports.health),
      HEALTH_HOST: '127.0.0.1',
      ...rewriterWebhookEnv(plan),
    },
    ready: () => answers(ports.health, 'http'),
  };
  // Applied while the units start: the install's CRDs are there already.
  const configured = applyKubeVirtConfiguration(o.kubectl, plan);
  configured.catch(() => undefined);
  return {
    specs: [rewriter],
    controllerEnv: { KUBEVIRT_CONFIG_NAMESPACE: KUBEVIRT_NAMESPACE },
    simulatorRole: 'node-agent',
    startBeside: async (started) => {
      const proc = started.find((u) => u.spec.name === KUBEVIRT_REWRITER)?.proc;
      if (proc === undefined) throw new Error(`${KUBEVIRT_REWRITER} was not started`);
      await Promise.all([configured, waitReady(rewriter, proc)]);
      const k = await startKubeVirt(plan, {
        binDir: o.binDir,
        kubectl: o.kubectl,
        rewriterKubeconfig,
        logDir: o.logDir,
        detached: true,
        started: (q) => p.supervisor.add(q),
      });
      return { [k.virtApi.name]: k.virtApi, [k.virtController.name]: k.virtController };
    },
  };
}
