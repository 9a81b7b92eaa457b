/** Our units as local processes (controller, admission, audit, api-rewriter; with the simulators, subresources and storage; route-forge, dra, pre-delete on demand). */
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeClient } from '../shared/kube/index.js';
import { freePort } from '../tests/env/ports.js';
import { type LoggedProcess } from '../tests/env/process.js';
import { garbageCollectCommand, type LocalRegistry } from '../tests/env/local-registry.js';
import type { Subscriber } from './eventing.js';
import type { Kubectl } from './install.js';
import { MODULE_NAMESPACE, ServiceAccountTokens } from './identities.js';
import { POD_CIDR, SERVICE_CIDR, type LocalCluster } from './local-cluster.js';
import { ADMISSION_SECRET, IMPORTER_ENTRY, answers, portOf, type Parts } from './parts.js';
import { SecretFiles } from './secret-files.js';
import { kubeVirtSide, type KubeVirtMode, type KubeVirtSide } from './start-kubevirt.js';
import { SIMULATED_CLASS_NAMES } from './simulators/storage-simulator/classes.js';
import { registerEvictionInterceptor } from './eviction.js';
import { API_SERVICE, makeVirtApiPki, routeApiService, SUBRESOURCES_SECRET, VIRT_API_CLIENT_SECRET, virtApiEnv } from './subresources.js';
import { logHas, numberFromLog, startUnit, waitReady, type UnitSpec } from './units.js';
import { waitFor } from '../shared/testing/wait.js';

/** The USB/IP handshake's shared secret, kept by the controller (its CERT_SHARED_SECRETS default). */
const USBIP_SECRET = 'virtualization-dra-usbip';

/** The pre-delete function, started by the first event for it and then kept (see eventing.ts). */
export function preDeleteOnDemand(p: Parts, units: Record<string, LoggedProcess>): Subscriber {
  let started: Promise<string> | undefined;
  return {
    ensure: () =>
      (started ??= (async () => {
        const logDir = join(p.o.workDir, 'units');
        const port = (): number | undefined => numberFromLog(join(logDir, 'pre-delete.log'), 'listening', 'port');
        const spec: UnitSpec = {
          name: 'pre-delete',
          entry: 'functions/pre-delete/index.ts',
          env: {
            KUBECONFIG: (await p.tokens?.kubeconfigFor('pre-delete')) ?? '',
            PORT: '0',
            HOST: '127.0.0.1',
            // The Knative Service's value (knative/functions/pre-delete.yaml), below its request timeout.
            WAIT_TIMEOUT: '540s',
          },
          ready: () => answers(port(), 'http'),
        };
        p.o.say('pre-delete: a ModuleConfig changed; starting the function');
        const proc = startUnit(spec, { logDir, supervisor: p.supervisor, bundles: p.bundles });
        units['pre-delete'] = proc;
        await waitReady(spec, proc);
        return `http://127.0.0.1:${port() ?? 0}/`;
      })()),
  };
}

/** What the units get beyond the options: where they run and what runs beside them. */
export interface UnitOptions {
  admin: KubeClient;
  cluster?: LocalCluster;
  /** Fixed when the apiserver's audit webhook was configured with it; else the unit picks one. */
  auditPort?: number;
  simulator: boolean;
  /** The local DVCR (with the simulator): the controller runs its storage reconcilers against it. */
  dvcr?: LocalRegistry;
  /** Run route-forge with this environment (a network namespace or dry-run): local platform only. */
  routeForgeEnv?: Record<string, string>;
  /** Run virtualization-dra with this environment (a simulated node): local platform only. */
  draEnv?: Record<string, string>;
  /** Called as soon as the admission function listens (before it is ready: it needs its certificate). */
  onAdmissionPort?: (port: number) => Promise<void>;
  /** With the simulator: which KubeVirt runs (start-kubevirt.ts); simulated when unset. */
  kubevirt?: { mode: KubeVirtMode; kubectl: Kubectl };
}

/** Start our units as local processes, each under its own ServiceAccount token; resolves once all are ready. */
export async function startUnits(p: Parts, o: UnitOptions): Promise<{ units: Record<string, LoggedProcess>; ports: { admission: number; audit: number } }> {
  const { workDir, flags, say } = p.o;
  const tokens = new ServiceAccountTokens(o.admin, workDir, (m) => say(`warning: ${m}`));
  p.tokens = tokens;
  const accounts = ['controller', 'admission', 'audit', ...(o.simulator ? ['kubevirt-simulator', 'subresources', 'storage-simulator'] : [])];
  const [controllerKc = '', admissionKc = '', auditKc = '', simulatorKc = '', subresourcesKc = '', storageSimulatorKc = ''] = await Promise.all(
    accounts.map((sa) => tokens.kubeconfigFor(sa)),
  );
  p.secretFiles = new SecretFiles(join(workDir, 'admission-tls'), { kube: o.admin, namespace: MODULE_NAMESPACE, name: ADMISSION_SECRET });
  await p.secretFiles.start();
  const tls = p.secretFiles;
  const logDir = join(workDir, 'units');
  await mkdir(logDir, { recursive: true });
  const logOf = (name: string): string => join(logDir, `${name}.log`);
  const kubevirt = await kubeVirtSide(p, o, tokens, logDir);
  const listening = (name: string): number | undefined => numberFromLog(logOf(name), 'listening', 'port');
  const healthPort = (): number | undefined => numberFromLog(logOf('controller'), 'started: health and metrics served', 'healthPort');
  // The rewriter's ports are chosen here, so that the platform reads nothing of its log to find it.
  const rewriter = { proxy: await freePort(), health: await freePort() };
  const specs: UnitSpec[] = [
    {
      name: 'controller',
      entry: 'daemons/controller/main.ts',
      env: {
        KUBECONFIG: controllerKc,
        POD_NAME: `controller-local-${process.pid}`,
        POD_NAMESPACE: MODULE_NAMESPACE,
        HEALTH_PORT: '0',
        HEALTH_HOST: '127.0.0.1',
        VIRTUAL_MACHINE_CIDRS: flags.vmCidr,
        CERT_ISSUER: 'self',
        // Images and disks: the local DVCR; the storage simulator runs the importer pods and makes the volumes.
        // Progress is read twice a second, so that the demo's short import shows some. Against a given
        // cluster the storage reconcilers run with their defaults (its DVCR and importer image).
        // DVCR garbage collection deletes manifests through the registry's API, then frees the blobs
        // with the registry's own garbage-collect (on the ModuleConfig's dvcr.gc schedule).
        ...(o.dvcr !== undefined
          ? { DVCR_ADDRESS: o.dvcr.host, DVCR_PLAIN_HTTP: 'true', IMPORT_PROGRESS_INTERVAL: '500ms', DVCR_GC_COMMAND: garbageCollectCommand(o.dvcr) }
          : {}),
        ...kubevirt.controllerEnv,
      },
      ready: () => answers(healthPort(), 'http'),
    },
    {
      name: 'audit',
      entry: 'functions/audit/index.ts',
      env: {
        KUBECONFIG: auditKc,
        PORT: String(o.auditPort ?? 0),
        HOST: '127.0.0.1',
        // The apiserver's audit webhook calls it over TLS (its token is sent only over TLS).
        ...(o.cluster !== undefined ? { TLS_CERT_FILE: o.cluster.auditWebhook.certPath, TLS_KEY_FILE: o.cluster.auditWebhook.keyPath } : {}),
      },
      // The apiserver's audit webhook sends to it until the apiserver has stopped.
      ...(o.cluster !== undefined ? { outlives: 'kube-apiserver' } : {}),
      ready: () => answers(listening('audit'), o.cluster !== undefined ? 'https' : 'http'),
    },
    {
      name: 'admission',
      entry: 'functions/admission/index.ts',
      env: {
        KUBECONFIG: admissionKc,
        PORT: '0',
        HOST: '127.0.0.1',
        TLS_CERT_FILE: tls.path('tls.crt'),
        TLS_KEY_FILE: tls.path('tls.key'),
        TLS_RELOAD_INTERVAL_MS: '1000',
        ...(o.cluster !== undefined ? { CLUSTER_POD_SUBNET_CIDR: POD_CIDR, CLUSTER_SERVICE_SUBNET_CIDR: SERVICE_CIDR } : {}),
      },
      // Ready only with a sound certificate: the controller issues it, the Secret files bring it.
      ready: () => answers(listening('admission'), 'https'),
    },
    {
      // kube-api-rewriter: kubevirt.io names for KubeVirt's clients, under the controller's identity (its sidecar in the original).
      name: 'api-rewriter',
      entry: 'daemons/api-rewriter/main.ts',
      env: { KUBECONFIG: controllerKc, PROXY_PORT: String(rewriter.proxy), HEALTH_PORT: String(rewriter.health), HEALTH_HOST: '127.0.0.1' },
      ready: () => answers(rewriter.health, 'http'),
    },
  ];
  if (o.simulator) {
    const logPath = logOf('kubevirt-simulator');
    // The simulator serves the virt-api stand-in behind the subresources API (platform/subresources.ts).
    p.virtApiClientTls = new SecretFiles(join(workDir, VIRT_API_CLIENT_SECRET), {
      kube: o.admin,
      namespace: MODULE_NAMESPACE,
      name: VIRT_API_CLIENT_SECRET,
    });
    await p.virtApiClientTls.start();
    const virtApiPki = await makeVirtApiPki(join(workDir, 'virt-api'));
    const virtApi = virtApiEnv(virtApiPki, await freePort(), p.virtApiClientTls);
    const evictionEnv = await simulatedEvictionInterceptor(kubevirt, o.admin, virtApiPki.caFile);
    p.subresourcesTls = new SecretFiles(join(workDir, SUBRESOURCES_SECRET), { kube: o.admin, namespace: MODULE_NAMESPACE, name: SUBRESOURCES_SECRET });
    await p.subresourcesTls.start();
    const subTls = p.subresourcesTls;
    specs.push(
      {
        name: 'kubevirt-simulator',
        entry: 'platform/simulators/kubevirt-simulator/main.ts',
        // Beside real virt-controller only virt-handler's part (start-kubevirt.ts).
        env: {
          KUBECONFIG: simulatorKc,
          ROLE: kubevirt.simulatorRole,
          LAUNCHER_PODS: 'true',
          GUEST_BOOT_DELAY: '1s',
          MIGRATION_DELAY: '2s',
          // Real guests (QEMU processes) by default where QEMU is installed; --guests decides.
          QEMU_GUESTS: { auto: 'auto', qemu: 'on', simulated: 'off' }[flags.guests],
          GUEST_WORK_DIR: join(workDir, 'guests'),
          ...evictionEnv,
          ...virtApi.simulator,
        },
        ready: () => Promise.resolve(logHas(logPath, 'kubevirt simulator started')),
      },
      {
        name: 'subresources',
        entry: 'functions/subresources/index.ts',
        env: {
          KUBECONFIG: subresourcesKc,
          PORT: '0',
          HOST: '127.0.0.1',
          TLS_CERT_FILE: subTls.path('tls.crt'),
          TLS_KEY_FILE: subTls.path('tls.key'),
          TLS_RELOAD_INTERVAL_MS: '1000',
          ...virtApi.subresources,
        },
        ready: () => answers(listening('subresources'), 'https'),
      },
      {
        name: 'storage-simulator',
        entry: 'platform/simulators/storage-simulator/main.ts',
        env: {
          KUBECONFIG: storageSimulatorKc,
          VOLUMES_DIR: join(workDir, 'volumes'),
          STORAGE_CLASSES: SIMULATED_CLASS_NAMES.join(','),
          REQUIRE_NODE: 'true',
          ...(p.bundles?.files.get(IMPORTER_ENTRY) !== undefined ? { IMPORTER_PROGRAM: p.bundles.files.get(IMPORTER_ENTRY) ?? '' } : {}),
        },
        ready: () => Promise.resolve(logHas(logOf('storage-simulator'), 'storage simulator started')),
      },
    );
  }
  specs.push(...kubevirt.specs);
  if (o.routeForgeEnv !== undefined) {
    const env = o.routeForgeEnv;
    specs.push({
      name: 'route-forge',
      entry: 'daemons/route-forge/main.ts',
      env: { KUBECONFIG: await tokens.kubeconfigFor('route-forge'), HEALTH_PORT: '0', HEALTH_HOST: '127.0.0.1', VIRTUAL_MACHINE_CIDRS: flags.vmCidr, ...env },
      ready: () => answers(numberFromLog(logOf('route-forge'), 'started: health and metrics served', 'healthPort'), 'http'),
    });
  }
  const dra = o.draEnv === undefined ? undefined : await draUnit(p, o.draEnv, o.admin, await tokens.kubeconfigFor('dra'), logOf);
  say(`starting ${specs.map((s) => s.name).join(', ')} as local processes (each under its own ServiceAccount token; logs in ${logDir})`);
  const started = specs.map((spec) => ({ spec, proc: startUnit(spec, { logDir, supervisor: p.supervisor, bundles: p.bundles }) }));
  const t = Date.now();
  const admission = started.find((u) => u.spec.name === 'admission');
  const admissionPort = admission === undefined ? 0 : await portOf(admission.proc, () => listening('admission'));
  await o.onAdmissionPort?.(admissionPort);
  const subresources = started.find((u) => u.spec.name === 'subresources');
  if (subresources !== undefined) {
    const port = await portOf(subresources.proc, () => listening('subresources'));
    await routeApiService(o.admin, MODULE_NAMESPACE, port);
    say(
      `  subresources API: APIService ${API_SERVICE} → Service ${MODULE_NAMESPACE}/subresources-api → 127.0.0.1:${port} (ExternalName); caBundle from the controller's CA; virt-api stand-in in the simulator`,
    );
  }
  const [kubevirtProcs] = await Promise.all([kubevirt.startBeside(started), ...started.map(({ spec, proc }) => waitReady(spec, proc))]);

  if (dra !== undefined) started.push({ spec: dra, proc: await startDra(p, dra, logDir, logOf) });
  say(`  units ready in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  say(`  kube-api-rewriter: http://127.0.0.1:${rewriter.proxy} (kubevirt.io names over the renamed internal API)`);
  return {
    units: {
      ...Object.fromEntries(started.map(({ spec, proc }) => [spec.name, proc])),
      ...kubevirtProcs,
    },
    ports: { admission: admissionPort, audit: listening('audit') ?? 0 },
  };
}

/**
 * virtualization-dra with its USB/IP gateway (kernel side SIMULATED) proving the shared secret the
 * controller keeps in a Secret, read from files kept like a mounted Secret volume.
 */
async function draUnit(p: Parts, draEnv: Record<string, string>, admin: KubeClient, kubeconfig: string, logOf: (name: string) => string): Promise<UnitSpec> {
  const { workDir } = p.o;
  p.usbipSecret = new SecretFiles(join(workDir, USBIP_SECRET), { kube: admin, namespace: MODULE_NAMESPACE, name: USBIP_SECRET, keys: ['secret'] });
  await p.usbipSecret.start();
  return {
    name: 'dra',
    entry: 'daemons/dra/main.ts',
    env: {
      KUBECONFIG: kubeconfig,
      HEALTH_PORT: '0',
      HEALTH_HOST: '127.0.0.1',
      USBIP_ENABLED: 'true',
      USBIP_KERNEL: 'simulated',
      USBIP_HOST: '127.0.0.1',
      USBIP_PORT: '0',
      USBIP_ADVERTISE_HOST: '127.0.0.1',
      USBIP_ANONYMOUS_DEVLIST: 'true',
      USBIP_SECRET_FILE: p.usbipSecret.path('secret'),
      ...draEnv,
    },
    ready: () => answers(numberFromLog(logOf('dra'), 'started: health and metrics served', 'healthPort'), 'http'),
  };
}

/** Start dra once the controller has made its Secret, as kubelet starts a pod only once its Secret volume can be mounted. */
async function startDra(p: Parts, dra: UnitSpec, logDir: string, logOf: (name: string) => string): Promise<LoggedProcess> {
  const secretFile = p.usbipSecret?.path('secret') ?? '';
  await waitFor(
    `Secret ${MODULE_NAMESPACE}/${USBIP_SECRET} from the controller`,
    () =>
      access(secretFile).then(
        () => true,
        () => false,
      ),
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  const proc = startUnit(dra, { logDir, supervisor: p.supervisor, bundles: p.bundles });
  await waitReady(dra, proc);
  const usbipPort = numberFromLog(logOf('dra'), 'USB/IP server listening', 'port');
  p.o.say(
    `  USB/IP gateway of dra (kernel side SIMULATED): usbip --tcp-port ${usbipPort ?? '?'} list -r 127.0.0.1; its node marks: kubectl get node ${dra.env['NODE_NAME'] ?? ''} --show-labels`,
  );
  return proc;
}

/**
 * virt-api's eviction interceptor: real virt-api's where it runs (platform/kubevirt.ts registers it once
 * virt-api serves), else the simulator's, with the stand-in's serving pair (platform/eviction.ts): then
 * it is registered here and the simulator's key for it returned.
 */
async function simulatedEvictionInterceptor(kubevirt: KubeVirtSide, admin: KubeClient, caFile: string): Promise<Record<string, string>> {
  if (kubevirt.simulatorRole !== 'all') return {};
  const port = await freePort();
  await registerEvictionInterceptor(admin, port, caFile);
  return { EVICTION_WEBHOOK_PORT: String(port) };
}
