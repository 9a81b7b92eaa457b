/**
 * The platform: what `npm start` brings up, in order, and takes down in the reverse order.
 *
 * Local (default): control plane → kwok and nodes ‖ the install's CRDs, then the rest of the install →
 * the admission webhooks routed to the local function → ServiceAccount tokens → our units (controller,
 * admission, audit) and the KubeVirt simulator → the ModuleConfig, through our webhook.
 * With --kubeconfig: the install must be there already; only our units run, out-of-cluster.
 */
import { existsSync } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeClient } from '../shared/kube/index.js';
import { freePort } from '../tests/env/ports.js';
import { tailLog, waitUntil, type LoggedProcess } from '../tests/env/process.js';
import { waitFor } from '../shared/testing/wait.js';
import { moduleConfig } from './demo/objects.js';
import type { PlatformFlags } from './flags.js';
import { MODULE_NAMESPACE, ServiceAccountTokens } from './identities.js';
import { applyCrds, applyInstall, kubectlFor, type Kubectl } from './install.js';
import { createNodes, POD_CIDR, SERVICE_CIDR, startKwok, startLocalCluster, type LocalCluster } from './local-cluster.js';
import { SecretFiles } from './secret-files.js';
import { Supervisor } from './supervisor.js';
import { bundleUnits, logHas, numberFromLog, REPO_ROOT, startUnit, statusOf, waitReady, type Bundles, type UnitSpec } from './units.js';
import { WebhookRoute } from './webhook-wiring.js';
import { ModuleConfigTriggers, TRIGGER_NAMES, triggerIdentity, type Subscriber } from './eventing.js';
import { LocalRouteForge } from './route-forge.js';
import { prepareSimulatedUsbNode } from './simulators/usb-node.js';
import { startLocalRegistry, type LocalRegistry } from '../tests/env/local-registry.js';
import { HELPER_POD_SELECTOR, SIMULATED_STORAGE_CLASS } from './simulators/storage-simulator/config.js';
import { API_SERVICE, makeVirtApiPki, routeApiService, SUBRESOURCES_SECRET, VIRT_API_CLIENT_SECRET, virtApiEnv } from './subresources.js';

/** The USB/IP handshake's shared secret, kept by the controller (its CERT_SHARED_SECRETS default). */
const USBIP_SECRET = 'virtualization-dra-usbip';

export const ADMISSION_SERVICE = 'admission-webhook';
export const ADMISSION_SECRET = 'admission-tls';
/** The simulator's ServiceAccount and RBAC (not part of the install). */
const SIMULATOR_RBAC = join(REPO_ROOT, 'platform/simulators/kubevirt-simulator/rbac.yaml');
/** The storage simulator's ServiceAccount and RBAC (not part of the install either). */
const STORAGE_SIMULATOR_RBAC = join(REPO_ROOT, 'platform/simulators/storage-simulator/rbac.yaml');
/** The importer program, bundled like the units: the storage simulator runs it for each helper pod. */
const IMPORTER_ENTRY = 'daemons/importer/main.ts';
const UNIT_ENTRIES = [
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

/** The default StorageClass of the local platform: its claims get directory volumes from the storage simulator. */
const STORAGE_CLASS = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: SIMULATED_STORAGE_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  // Volumes are made (pre-bound) by the storage simulator, not by a provisioner of the controller-manager.
  provisioner: 'kubernetes.io/no-provisioner',
  volumeBindingMode: 'Immediate',
  allowVolumeExpansion: true,
  reclaimPolicy: 'Retain',
};

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
}

export class Platform {
  readonly supervisor: Supervisor;
  private tokens: ServiceAccountTokens | undefined;
  private secretFiles: SecretFiles | undefined;
  private subresourcesTls: SecretFiles | undefined;
  private virtApiClientTls: SecretFiles | undefined;
  private usbipSecret: SecretFiles | undefined;
  private admin: KubeClient | undefined;
  private bundles: Bundles | undefined;
  private route: WebhookRoute | undefined;
  private triggers: ModuleConfigTriggers | undefined;
  private sourceKube: KubeClient | undefined;
  private routeForge: LocalRouteForge | undefined;

  constructor(private readonly o: PlatformOptions) {
    this.supervisor = new Supervisor(join(o.workDir, 'platform.json'));
  }

  async start(): Promise<RunningPlatform> {
    return this.o.flags.kubeconfig === undefined ? this.startLocal() : this.startAgainst(this.o.flags.kubeconfig);
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

  private async startLocal(): Promise<RunningPlatform> {
    const { binDir, workDir, flags, say } = this.o;
    // The audit function's port goes into the apiserver's flags, so it is chosen now; every other unit
    // binds port 0 and the platform reads the port from its log.
    const auditPort = await freePort();
    const t = Date.now();
    say('starting the control plane: etcd, kube-apiserver (audit webhook → our audit function), kube-controller-manager, kube-scheduler');
    const cluster = await startLocalCluster({ binDir, workDir, supervisor: this.supervisor, auditPort });
    const state = cluster.state;
    say(`control plane up in ${((Date.now() - t) / 1000).toFixed(1)} s at ${state.server}`);
    say(`  export KUBECONFIG=${state.kubeconfigPath}`);
    const admin = (this.admin = KubeClient.fromSource({ kubeconfigPath: state.kubeconfigPath }));
    const kubectl = kubectlFor(binDir, state.kubeconfigPath);

    say(`starting kwok (simulated kubelets) with ${flags.nodes} node(s) and DVCR (docker-registry); applying the install (knative/); bundling our units`);
    const took = async <T>(work: Promise<T>): Promise<[T, string]> => {
      const at = Date.now();
      const value = await work;
      return [value, `${((Date.now() - at) / 1000).toFixed(1)} s`];
    };
    const [[nodes, kwokTime], [report, installTime], [bundles], [dvcr, dvcrTime]] = await Promise.all([
      // The importer pods are the storage simulator's to run, not kwok's.
      took(
        startKwok(cluster, { binDir, workDir, supervisor: this.supervisor, unmanagedPodLabel: HELPER_POD_SELECTOR }).then(() =>
          createNodes(admin, flags.nodes),
        ),
      ),
      // The CRDs and the rest at once: nothing else of the install is an object of our CRDs.
      took(
        Promise.all([
          applyCrds(kubectl),
          applyInstall(kubectl, admin).then(async (r) => {
            await kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', '-f', SIMULATOR_RBAC, '-f', STORAGE_SIMULATOR_RBAC]);
            await kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', '-f', '-'], auditWebhookBinding(cluster.auditWebhook.user));
            await kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', '-f', '-'], JSON.stringify(STORAGE_CLASS));
            return r;
          }),
        ]).then(([, r]) => r),
      ),
      took(bundleUnits(UNIT_ENTRIES)),
      took(this.startDvcr()),
    ]);
    this.bundles = bundles;
    say(`  DVCR: docker-registry at ${dvcr.url} (${dvcrTime}), storage in ${join(workDir, 'dvcr')}; StorageClass ${SIMULATED_STORAGE_CLASS} (default)`);
    say(`  nodes: ${nodes.join(', ')} (${kwokTime}); install: ${report.applied} objects applied (${installTime})`);
    for (const s of report.skipped) say(`  not applied: ${s.count} × ${s.what} (${s.why})`);
    this.routeForge = new LocalRouteForge(admin, kubectl, say, workDir);
    const routeForgeEnv = await this.routeForge.prepare(nodes);
    // virtualization-dra on the first node, over a SIMULATED sysfs tree (kwok nodes have no USB).
    const draEnv = nodes[0] === undefined ? undefined : await prepareSimulatedUsbNode(join(workDir, 'dra'), nodes[0]);
    const { units } = await this.startUnits({
      admin,
      cluster,
      auditPort,
      simulator: true,
      dvcr,
      routeForgeEnv,
      draEnv,
      onAdmissionPort: async (admissionPort) => {
        const route = new WebhookRoute(admin, { namespace: MODULE_NAMESPACE, name: ADMISSION_SERVICE, port: admissionPort }, (m) => say(`warning: ${m}`));
        this.route = route;
        const rerouted = await route.start();
        say(
          `  webhooks: Service ${MODULE_NAMESPACE}/${ADMISSION_SERVICE} → 127.0.0.1:${admissionPort} (ExternalName) for ${rerouted} webhook(s); caBundle from the controller's CA`,
        );
      },
    });
    this.sourceKube = KubeClient.fromSource({ kubeconfigPath: await this.tokens?.kubeconfigFor('moduleconfig-source') });
    // The Triggers' sender identities, which Knative's OIDC feature would create.
    await kubectl(['apply', '--server-side', '--field-manager=virtualization-platform', '-f', '-'], triggerIdentities());
    const tokens = this.tokens;
    this.triggers = new ModuleConfigTriggers(this.sourceKube, this.preDeleteOnDemand(units), say, (sa) =>
      tokens === undefined ? Promise.reject(new Error('no ServiceAccount tokens')) : tokens.token(sa),
    );
    await this.triggers.start();
    say('  pre-delete: started on demand, by the first update or deletion of a ModuleConfig (as its Knative Triggers would)');
    say('applying ModuleConfig virtualization (validated by our admission webhook)');
    await waitFor(
      'the ModuleConfig accepted through the admission webhook',
      async () => {
        await kubectl(['apply', '-f', '-'], JSON.stringify(moduleConfig(flags.vmCidr)));
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    return {
      local: true,
      server: state.server,
      adminKubeconfig: state.kubeconfigPath,
      admin,
      kubectl,
      userKubectl: async (name) => kubectlFor(binDir, await cluster.userKubeconfig(name)),
      auditLog: units['audit']?.logPath ?? '',
      units: { dvcr: dvcr.process, ...units },
    };
  }

  /** DVCR: Debian's docker-registry on a free loopback port, storage in the work directory, supervised like the rest. */
  private async startDvcr(): Promise<LocalRegistry> {
    const registry = await startLocalRegistry({ dir: join(this.o.workDir, 'dvcr'), detached: true });
    this.supervisor.add(registry.process, { graceMs: 3_000 });
    return registry;
  }

  /** --kubeconfig: our units against a cluster that has the install; nothing of the cluster is changed. */
  private async startAgainst(kubeconfigPath: string): Promise<RunningPlatform> {
    const { binDir, say } = this.o;
    if (!existsSync(kubeconfigPath)) throw new Error(`--kubeconfig ${kubeconfigPath}: no such file`);
    const admin = (this.admin = KubeClient.fromSource({ kubeconfigPath }));
    const kubectl = kubectlFor(binDir, kubeconfigPath);
    const server = admin.kubeConfig.getCurrentCluster()?.server ?? '?';
    say(`using the cluster at ${server} (${kubeconfigPath}): no local control plane, nodes or simulator`);
    const missing = await kubectl(['-n', MODULE_NAMESPACE, 'get', 'serviceaccount', 'controller', 'admission', 'audit', '-o', 'name']).then(
      () => undefined,
      (err: unknown) => String(err),
    );
    const crd = await kubectl(['get', 'crd', 'virtualmachines.virtualization.deckhouse.io', '-o', 'name']).then(
      () => undefined,
      (err: unknown) => String(err),
    );
    if (missing !== undefined || crd !== undefined) {
      throw new Error(
        `the install is not applied to that cluster (namespace ${MODULE_NAMESPACE}, its ServiceAccounts and the CRDs are needed): apply it first with \`kubectl apply -k knative/\`\n${missing ?? crd ?? ''}`,
      );
    }
    this.bundles = await bundleUnits(UNIT_ENTRIES);
    const { units, ports } = await this.startUnits({ admin, simulator: false });
    say(
      `  the cluster's apiserver keeps calling its own webhooks and audit sink; the local admission (https://127.0.0.1:${ports.admission}) and audit (http://127.0.0.1:${ports.audit}) serve for you to call`,
    );
    return {
      local: false,
      server,
      adminKubeconfig: kubeconfigPath,
      admin,
      kubectl,
      userKubectl: (name) => Promise.resolve(kubectlFor(binDir, kubeconfigPath, [`--as=${name}`])),
      auditLog: units['audit']?.logPath ?? '',
      units,
    };
  }

  /** The pre-delete function, started by the first event for it and then kept (see eventing.ts). */
  private preDeleteOnDemand(units: Record<string, LoggedProcess>): Subscriber {
    let started: Promise<string> | undefined;
    return {
      ensure: () =>
        (started ??= (async () => {
          const logDir = join(this.o.workDir, 'units');
          const port = (): number | undefined => numberFromLog(join(logDir, 'pre-delete.log'), 'listening', 'port');
          const spec: UnitSpec = {
            name: 'pre-delete',
            entry: 'functions/pre-delete/index.ts',
            env: {
              KUBECONFIG: (await this.tokens?.kubeconfigFor('pre-delete')) ?? '',
              PORT: '0',
              HOST: '127.0.0.1',
              // The Knative Service's value (knative/functions/pre-delete.yaml), below its request timeout.
              WAIT_TIMEOUT: '540s',
            },
            ready: () => answers(port(), 'http'),
          };
          this.o.say('pre-delete: a ModuleConfig changed; starting the function');
          const proc = startUnit(spec, { logDir, supervisor: this.supervisor, bundles: this.bundles });
          units['pre-delete'] = proc;
          await waitReady(spec, proc);
          return `http://127.0.0.1:${port() ?? 0}/`;
        })()),
    };
  }

  private async startUnits(o: {
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
  }): Promise<{ units: Record<string, LoggedProcess>; ports: { admission: number; audit: number } }> {
    const { workDir, flags, say } = this.o;
    const tokens = new ServiceAccountTokens(o.admin, workDir, (m) => say(`warning: ${m}`));
    this.tokens = tokens;
    const accounts = ['controller', 'admission', 'audit', ...(o.simulator ? ['kubevirt-simulator', 'subresources', 'storage-simulator'] : [])];
    const [controllerKc = '', admissionKc = '', auditKc = '', simulatorKc = '', subresourcesKc = '', storageSimulatorKc = ''] = await Promise.all(
      accounts.map((sa) => tokens.kubeconfigFor(sa)),
    );
    this.secretFiles = new SecretFiles(join(workDir, 'admission-tls'), { kube: o.admin, namespace: MODULE_NAMESPACE, name: ADMISSION_SECRET });
    await this.secretFiles.start();
    const tls = this.secretFiles;
    const logDir = join(workDir, 'units');
    await mkdir(logDir, { recursive: true });
    const logOf = (name: string): string => join(logDir, `${name}.log`);
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
          ...(o.dvcr !== undefined ? { DVCR_ADDRESS: o.dvcr.host, DVCR_PLAIN_HTTP: 'true', IMPORT_PROGRESS_INTERVAL: '500ms' } : {}),
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
      this.virtApiClientTls = new SecretFiles(join(workDir, VIRT_API_CLIENT_SECRET), {
        kube: o.admin,
        namespace: MODULE_NAMESPACE,
        name: VIRT_API_CLIENT_SECRET,
      });
      await this.virtApiClientTls.start();
      const virtApi = virtApiEnv(await makeVirtApiPki(join(workDir, 'virt-api')), await freePort(), this.virtApiClientTls);
      this.subresourcesTls = new SecretFiles(join(workDir, SUBRESOURCES_SECRET), { kube: o.admin, namespace: MODULE_NAMESPACE, name: SUBRESOURCES_SECRET });
      await this.subresourcesTls.start();
      const subTls = this.subresourcesTls;
      specs.push(
        {
          name: 'kubevirt-simulator',
          entry: 'platform/simulators/kubevirt-simulator/main.ts',
          env: { KUBECONFIG: simulatorKc, LAUNCHER_PODS: 'true', GUEST_BOOT_DELAY: '1s', MIGRATION_DELAY: '2s', ...virtApi.simulator },
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
            STORAGE_CLASSES: SIMULATED_STORAGE_CLASS,
            REQUIRE_NODE: 'true',
            ...(this.bundles?.files.get(IMPORTER_ENTRY) !== undefined ? { IMPORTER_PROGRAM: this.bundles.files.get(IMPORTER_ENTRY) ?? '' } : {}),
          },
          ready: () => Promise.resolve(logHas(logOf('storage-simulator'), 'storage simulator started')),
        },
      );
    }
    if (o.routeForgeEnv !== undefined) {
      const env = o.routeForgeEnv;
      specs.push({
        name: 'route-forge',
        entry: 'daemons/route-forge/main.ts',
        env: { KUBECONFIG: await tokens.kubeconfigFor('route-forge'), HEALTH_PORT: '0', HEALTH_HOST: '127.0.0.1', VIRTUAL_MACHINE_CIDRS: flags.vmCidr, ...env },
        ready: () => answers(numberFromLog(logOf('route-forge'), 'started: health and metrics served', 'healthPort'), 'http'),
      });
    }
    const dra = o.draEnv === undefined ? undefined : await this.draUnit(o.draEnv, o.admin, await tokens.kubeconfigFor('dra'), logOf);
    say(`starting ${specs.map((s) => s.name).join(', ')} as local processes (each under its own ServiceAccount token; logs in ${logDir})`);
    const started = specs.map((spec) => ({ spec, proc: startUnit(spec, { logDir, supervisor: this.supervisor, bundles: this.bundles }) }));
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
    await Promise.all(started.map(({ spec, proc }) => waitReady(spec, proc)));
    if (dra !== undefined) started.push({ spec: dra, proc: await this.startDra(dra, logDir, logOf) });
    say(`  units ready in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    say(`  kube-api-rewriter: http://127.0.0.1:${rewriter.proxy} (kubevirt.io names over the renamed internal API)`);
    return {
      units: Object.fromEntries(started.map(({ spec, proc }) => [spec.name, proc])),
      ports: { admission: admissionPort, audit: listening('audit') ?? 0 },
    };
  }

  /**
   * virtualization-dra with its USB/IP gateway (kernel side SIMULATED) proving the shared secret the
   * controller keeps in a Secret, read from files kept like a mounted Secret volume.
   */
  private async draUnit(draEnv: Record<string, string>, admin: KubeClient, kubeconfig: string, logOf: (name: string) => string): Promise<UnitSpec> {
    const { workDir } = this.o;
    this.usbipSecret = new SecretFiles(join(workDir, USBIP_SECRET), { kube: admin, namespace: MODULE_NAMESPACE, name: USBIP_SECRET, keys: ['secret'] });
    await this.usbipSecret.start();
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
        USBIP_SECRET_FILE: this.usbipSecret.path('secret'),
        ...draEnv,
      },
      ready: () => answers(numberFromLog(logOf('dra'), 'started: health and metrics served', 'healthPort'), 'http'),
    };
  }

  /** Start dra once the controller has made its Secret, as kubelet starts a pod only once its Secret volume can be mounted. */
  private async startDra(dra: UnitSpec, logDir: string, logOf: (name: string) => string): Promise<LoggedProcess> {
    const secretFile = this.usbipSecret?.path('secret') ?? '';
    await waitUntil(
      `Secret ${MODULE_NAMESPACE}/${USBIP_SECRET} from the controller`,
      () =>
        access(secretFile).then(
          () => true,
          () => false,
        ),
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const proc = startUnit(dra, { logDir, supervisor: this.supervisor, bundles: this.bundles });
    await waitReady(dra, proc);
    const usbipPort = numberFromLog(logOf('dra'), 'USB/IP server listening', 'port');
    this.o.say(
      `  USB/IP gateway of dra (kernel side SIMULATED): usbip --tcp-port ${usbipPort ?? '?'} list -r 127.0.0.1; its node marks: kubectl get node ${dra.env['NODE_NAME'] ?? ''} --show-labels`,
    );
    return proc;
  }
}

/** The binding of the apiserver's audit webhook user (a static token, local-cluster.ts) to the install's audit-sender role. */
function auditWebhookBinding(user: string): string {
  return JSON.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'virtualization-platform:audit-webhook' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'd8:virtualization:audit-sender' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
}

/** The ServiceAccounts the Triggers deliver as (the install binds them to the pre-delete-sender role). */
function triggerIdentities(): string {
  const accounts = Object.values(TRIGGER_NAMES).map((trigger) => ({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: triggerIdentity(trigger), namespace: MODULE_NAMESPACE },
  }));
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: accounts });
}

/** Whether the unit on `port` answers its readiness probe. */
async function answers(port: number | undefined, scheme: 'http' | 'https'): Promise<boolean> {
  return port !== undefined && (await statusOf(`${scheme}://127.0.0.1:${port}/health/readiness`)) === 200;
}

/** The port a unit started with port 0 has bound, once it says so in its log. */
async function portOf(proc: LoggedProcess, read: () => number | undefined): Promise<number> {
  let port: number | undefined;
  await waitUntil(`${proc.name} listening`, () => Promise.resolve((port = read()) !== undefined), {
    timeoutMs: 120_000,
    intervalMs: 100,
    abortIf: () => (proc.hasExited() ? `${proc.name} exited while starting; its log ${proc.logPath} ends with:\n${tailLog(proc.logPath, 15)}` : undefined),
  });
  return port ?? 0;
}
