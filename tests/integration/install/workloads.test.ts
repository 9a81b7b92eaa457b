import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { loadAllYaml } from '@kubernetes/client-node';
import { loadConfig as loadControllerConfig } from '../../../daemons/controller/config.js';
import { loadConfig as loadDraConfig } from '../../../daemons/dra/config.js';
import { containersOf, installAndHooks, isKnativeService, keyOf, podSpecOf, type Container, type Manifest } from './manifests.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}
interface Volume {
  name: string;
  [source: string]: unknown;
}

const SKAFFOLD = fileURLToPath(new URL('../../../skaffold.yaml', import.meta.url));
let objects: Manifest[] = [];
let workloads: Manifest[] = [];

beforeAll(async () => {
  objects = await installAndHooks();
  workloads = objects.filter((m) => podSpecOf(m) !== undefined);
});

/**
 * The workloads that run as root, each with the capabilities it adds and why. Programming a node's
 * routes needs CAP_NET_ADMIN, and Kubernetes gives a non-root process no ambient capabilities, so an
 * added capability would be gone after exec for a non-root user. The DRA daemon adds none: it
 * needs to own kubelet's root-owned plugin directories, /var/run/cdi, its state dir and the root-owned
 * sysfs attributes of usbip-host and vhci_hcd, where the kernel checks no capability.
 */
const ROOT_WITH_CAPABILITIES: Record<string, string[]> = {
  'DaemonSet/d8-virtualization/route-forge': ['NET_ADMIN'],
  'DaemonSet/d8-virtualization/dra': [],
};

/**
 * The containers that run without the runtime's default AppArmor profile, and why: that profile
 * denies every write under /sys/bus and /sys/devices, which the USB/IP gateway makes (bind a device
 * to usbip-host, hand a socket to the kernel, attach to vhci_hcd).
 */
const APPARMOR_UNCONFINED = new Set(['DaemonSet/d8-virtualization/dra dra']);

/**
 * The images the install runs that we do not build: upstream KubeVirt's virt-operator, at the version
 * the tests build and run (tests/env/build-kubevirt.sh); it derives the other KubeVirt images from its own.
 */
const UPSTREAM_IMAGES = new Set(['kubevirt/virt-operator:v1.6.0']);

/** What a container's (or its pod's) securityContext must say, as [field, expected] pairs. */
function securityProblems(m: Manifest): string[] {
  const podContext = (podSpecOf(m)?.['securityContext'] as Record<string, unknown> | undefined) ?? {};
  const rootWith = ROOT_WITH_CAPABILITIES[keyOf(m)];
  return containersOf(m).flatMap((c) => {
    const ctx = c.securityContext ?? {};
    const problems: string[] = [];
    const added = (ctx['capabilities'] as { add?: string[] } | undefined)?.add ?? [];
    if (rootWith === undefined) {
      if ((ctx['runAsNonRoot'] ?? podContext['runAsNonRoot']) !== true) problems.push('runAsNonRoot');
      if (added.length > 0) problems.push(`capabilities.add ${added.join(',')}`);
    } else if (JSON.stringify(added) !== JSON.stringify(rootWith)) {
      problems.push(`capabilities.add exactly [${rootWith.join(',')}]`);
    }
    if (ctx['privileged'] !== undefined && ctx['privileged'] !== false) problems.push('privileged');
    const appArmor = (ctx['appArmorProfile'] ?? podContext['appArmorProfile']) as { type?: string } | undefined;
    const unconfined = APPARMOR_UNCONFINED.has(`${keyOf(m)} ${c.name}`);
    if ((appArmor?.type === 'Unconfined') !== unconfined) problems.push(unconfined ? 'appArmorProfile Unconfined' : `appArmorProfile ${appArmor?.type ?? ''}`);
    if (ctx['allowPrivilegeEscalation'] !== false) problems.push('allowPrivilegeEscalation');
    if (ctx['readOnlyRootFilesystem'] !== true) problems.push('readOnlyRootFilesystem');
    if (!((ctx['capabilities'] as { drop?: string[] } | undefined)?.drop ?? []).includes('ALL')) problems.push('capabilities.drop ALL');
    return problems.map((p) => `${keyOf(m)} ${c.name}: ${p}`);
  });
}

describe('workloads of the install', () => {
  it('include a Knative Service for each function the design lists, the controller and virt-operator Deployments, the route-forge and DRA DaemonSets and the hook Job', () => {
    const names = workloads.map(keyOf).sort();
    expect(names).toEqual(
      [
        'DaemonSet/d8-virtualization/dra',
        'DaemonSet/d8-virtualization/route-forge',
        'Deployment/d8-virtualization/controller',
        'Deployment/d8-virtualization/virt-operator',
        'Job/d8-virtualization/pre-delete-hook',
        'Service/d8-virtualization/admission',
        'Service/d8-virtualization/audit',
        'Service/d8-virtualization/pre-delete',
        'Service/d8-virtualization/subresources',
      ].sort(),
    );
  });

  it('run every container as non-root (route-forge: root with NET_ADMIN only; dra: root with no capability, AppArmor unconfined), unprivileged, without privilege escalation or other capabilities, on a read-only root', () => {
    expect(workloads.flatMap(securityProblems)).toEqual([]);
  });

  it("share the host network only where the node's routes are programmed and where the USB/IP server is reached at the node's address, resolving cluster names there too", () => {
    const host = workloads.filter((m) => podSpecOf(m)?.['hostNetwork'] === true);
    expect(host.map((m) => [keyOf(m), podSpecOf(m)?.['dnsPolicy']])).toEqual([
      ['DaemonSet/d8-virtualization/dra', 'ClusterFirstWithHostNet'],
      ['DaemonSet/d8-virtualization/route-forge', 'ClusterFirstWithHostNet'],
    ]);
  });

  it("run the DRA daemon with its USB/IP gateway on: the node's address, the controller's shared Secret, /sys writable, its state on the node's /var/run", () => {
    const dra = workloads.find((m) => keyOf(m) === 'DaemonSet/d8-virtualization/dra');
    const pod = podSpecOf(dra ?? ({} as Manifest)) as { volumes?: Volume[] } | undefined;
    const [c] = dra === undefined ? [] : (containersOf(dra) as Array<Container & { env?: EnvVar[]; volumeMounts?: VolumeMount[] }>);
    const env = new Map((c?.env ?? []).map((e) => [e.name, e.value ?? `fieldRef:${e.valueFrom?.fieldRef?.fieldPath ?? ''}`]));
    const volumeAt = (path: string): (Volume & { readOnly: boolean }) | undefined => {
      const mount = c?.volumeMounts?.find((v) => v.mountPath === path);
      const volume = pod?.volumes?.find((v) => v.name === mount?.name);
      return volume === undefined ? undefined : { ...volume, readOnly: mount?.readOnly === true };
    };
    const secretFile = env.get('USBIP_SECRET_FILE') ?? '';
    const secretDir = dirname(secretFile);
    const config = loadDraConfig({ NODE_NAME: 'n', ...Object.fromEntries([...env].filter(([, v]) => !v.startsWith('fieldRef:'))) });
    expect({
      enabled: config.USBIP_ENABLED,
      listen: env.get('USBIP_HOST'),
      advertise: env.get('USBIP_ADVERTISE_HOST'),
      port: c?.ports?.find((p) => p.containerPort === config.USBIP_PORT)?.name,
      anonymousDevlist: config.USBIP_ANONYMOUS_DEVLIST,
      secret: volumeAt(secretDir),
      sys: volumeAt('/sys'),
      state: volumeAt(config.STATE_DIR),
      cdi: volumeAt(config.CDI_ROOT),
    }).toEqual({
      enabled: true,
      listen: 'fieldRef:status.hostIP',
      advertise: 'fieldRef:status.hostIP',
      port: 'usbip',
      anonymousDevlist: false,
      // The Secret the controller's certificate manager keeps filled (its CERT_SHARED_SECRETS), key `secret`, required.
      secret: {
        name: 'usbip-secret',
        secret: { secretName: loadControllerConfig({}).CERT_SHARED_SECRETS[0], defaultMode: 0o400, items: [{ key: 'secret', path: basename(secretFile) }] },
        readOnly: true,
      },
      sys: { name: 'sys', hostPath: { path: '/sys', type: 'Directory' }, readOnly: false },
      // The checkpoint and the attachment records live as long as the CDI specs: tmpfs, same path on the host.
      state: { name: 'state', hostPath: { path: '/var/run/virtualization-dra', type: 'DirectoryOrCreate' }, readOnly: false },
      cdi: { name: 'cdi', hostPath: { path: '/var/run/cdi', type: 'DirectoryOrCreate' }, readOnly: false },
    });
  });

  it('give every Knative Service a concurrency, min and max scale, a timeout and health probes (TCP liveness where TLS is served)', () => {
    const problems = workloads.filter(isKnativeService).flatMap((m) => {
      const template = (m['spec'] as { template: { metadata?: { annotations?: Record<string, string> }; spec: Record<string, unknown> } }).template;
      const annotations = template.metadata?.annotations ?? {};
      const [c] = containersOf(m);
      const checks: Array<[string, boolean]> = [
        ['containerConcurrency', typeof template.spec['containerConcurrency'] === 'number'],
        ['timeoutSeconds', typeof template.spec['timeoutSeconds'] === 'number'],
        ['min-scale', /^\d+$/.test(annotations['autoscaling.knative.dev/min-scale'] ?? '')],
        ['max-scale', /^[1-9]\d*$/.test(annotations['autoscaling.knative.dev/max-scale'] ?? '')],
        ['readiness /health/readiness', c?.readinessProbe?.httpGet?.path === '/health/readiness'],
        // A TLS function without a usable certificate completes no handshake but is alive: TCP liveness
        // on its port, so a pod started before its Secret waits instead of restarting (ADR 0006).
        c?.readinessProbe?.httpGet?.scheme === 'HTTPS'
          ? ['liveness tcpSocket on the TLS port', c.livenessProbe?.tcpSocket?.port === c.ports?.[0]?.containerPort]
          : ['liveness /health/liveness', c?.livenessProbe?.httpGet?.path === '/health/liveness'],
      ];
      return checks.filter(([, ok]) => !ok).map(([what]) => `${keyOf(m)}: ${what}`);
    });
    expect(problems).toEqual([]);
  });

  it('use exactly the images skaffold builds, each built from the single Dockerfile for its unit', async () => {
    const configs = loadAllYaml(await readFile(SKAFFOLD, 'utf8')) as Array<{
      build?: { artifacts: Array<{ image: string; docker: { dockerfile: string; buildArgs: { UNIT: string; NODE_OPTIONS?: string } } }> };
    }>;
    const artifacts = configs.flatMap((c) => c.build?.artifacts ?? []);
    const used = new Set(workloads.flatMap((m) => containersOf(m).map((c) => c.image)).filter((image) => !UPSTREAM_IMAGES.has(image)));
    expect([...used].sort()).toEqual(artifacts.map((a) => a.image).sort());
    for (const a of artifacts) {
      // The build context is the repository: the Dockerfile and the unit's folder with its entry point exist.
      expect(existsSync(fileURLToPath(new URL(`../../../${a.docker.dockerfile}`, import.meta.url)))).toBe(true);
      const unit = fileURLToPath(new URL(`../../../${a.docker.buildArgs.UNIT}`, import.meta.url));
      expect([a.docker.buildArgs.UNIT, existsSync(join(unit, 'index.ts')) || existsSync(join(unit, 'main.ts'))]).toEqual([a.docker.buildArgs.UNIT, true]);
      expect(a.docker.dockerfile).toBe('Dockerfile');
      expect(a.image).toBe(`dev.local/virtualization-${a.docker.buildArgs.UNIT.split('/')[1]}`);
    }
  });

  it('build each image with the V8 flags its workload runs with, so that its code cache is used (shared/bundle)', () => {
    const configs = loadAllYaml(readFileSync(SKAFFOLD, 'utf8')) as Array<{
      build?: { artifacts: Array<{ image: string; docker: { buildArgs: { NODE_OPTIONS?: string } } }> };
    }>;
    const built = new Map(configs.flatMap((c) => c.build?.artifacts ?? []).map((a) => [a.image, a.docker.buildArgs.NODE_OPTIONS ?? '']));
    const mismatches = workloads.flatMap((m) =>
      (containersOf(m) as Array<Container & { env?: EnvVar[] }>).flatMap((c) => {
        if (UPSTREAM_IMAGES.has(c.image)) return [];
        const runs = c.env?.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
        return runs === built.get(c.image) ? [] : [`${keyOf(m)}: runs with NODE_OPTIONS '${runs}', built with '${built.get(c.image) ?? ''}'`];
      }),
    );
    expect(mismatches).toEqual([]);
    // The audit function is one that sets them (its young generation's cap).
    expect(built.get('dev.local/virtualization-audit')).toBe('--max-semi-space-size=4');
  });
});
