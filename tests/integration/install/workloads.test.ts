import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { loadAllYaml } from '@kubernetes/client-node';
import { containersOf, installAndHooks, isKnativeService, keyOf, podSpecOf, type Manifest } from './manifests.js';

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
 * added capability would be gone after exec for a non-root user. The DRA daemon adds none: it only
 * needs to own kubelet's root-owned plugin directories and /var/run/cdi.
 */
const ROOT_WITH_CAPABILITIES: Record<string, string[]> = {
  'DaemonSet/d8-virtualization/route-forge': ['NET_ADMIN'],
  'DaemonSet/d8-virtualization/dra': [],
};

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
    if (ctx['allowPrivilegeEscalation'] !== false) problems.push('allowPrivilegeEscalation');
    if (ctx['readOnlyRootFilesystem'] !== true) problems.push('readOnlyRootFilesystem');
    if (!((ctx['capabilities'] as { drop?: string[] } | undefined)?.drop ?? []).includes('ALL')) problems.push('capabilities.drop ALL');
    return problems.map((p) => `${keyOf(m)} ${c.name}: ${p}`);
  });
}

describe('workloads of the install', () => {
  it('include a Knative Service for each function the design lists, the controller Deployment, the route-forge and DRA DaemonSets and the hook Job', () => {
    const names = workloads.map(keyOf).sort();
    expect(names).toEqual(
      [
        'DaemonSet/d8-virtualization/dra',
        'DaemonSet/d8-virtualization/route-forge',
        'Deployment/d8-virtualization/controller',
        'Job/d8-virtualization/pre-delete-hook',
        'Service/d8-virtualization/admission',
        'Service/d8-virtualization/audit',
        'Service/d8-virtualization/pre-delete',
        'Service/d8-virtualization/subresources',
      ].sort(),
    );
  });

  it('run every container as non-root (route-forge: root with NET_ADMIN only; dra: root with no capability), without privilege escalation or other capabilities, on a read-only root', () => {
    expect(workloads.flatMap(securityProblems)).toEqual([]);
  });

  it("share the host network only where the node's routes are programmed", () => {
    expect(workloads.filter((m) => podSpecOf(m)?.['hostNetwork'] === true).map(keyOf)).toEqual(['DaemonSet/d8-virtualization/route-forge']);
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
      build?: { artifacts: Array<{ image: string; docker: { dockerfile: string; buildArgs: { UNIT: string } } }> };
    }>;
    const artifacts = configs.flatMap((c) => c.build?.artifacts ?? []);
    const used = new Set(workloads.flatMap((m) => containersOf(m).map((c) => c.image)));
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
});
