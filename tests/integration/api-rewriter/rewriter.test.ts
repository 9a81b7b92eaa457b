/**
 * kube-api-rewriter against the real kube-apiserver of tests/env, driven by the real kubectl: what a
 * KubeVirt component sees through the proxy (kubevirt.io names only) and what lands in the apiserver
 * (upstream KubeVirt's CRDs renamed, knative/kubevirt/crds, installed by the test set-up).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace, getTestEnv, kubectl, startExtraApiServer } from '../../env/index.js';
import { metricValue } from '../route-forge/process.js';
import { spawnRewriter, type RewriterProcess } from './process.js';

const INT = 'internal.virtualization.deckhouse.io';
let rw: RewriterProcess;
let ns: string;

const viaProxy = (args: string[], stdin?: string) => kubectl(args, { kubeconfigPath: rw.kubeconfigPath, ...(stdin !== undefined ? { stdin } : {}) });
const direct = (args: string[]) => kubectl(args);

async function ok(p: Promise<{ code: number; stdout: string; stderr: string }>): Promise<string> {
  const r = await p;
  if (r.code !== 0) throw new Error(`kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const vmManifest = (name: string): string =>
  JSON.stringify({
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name,
      namespace: ns,
      labels: { 'kubevirt.io/vm': name, 'app.kubernetes.io/managed-by': 'virt-operator', app: 'web' },
      annotations: { 'kubevirt.io/latest-observed-api-version': 'v1' },
      finalizers: ['kubevirt.io/virtualMachineControllerFinalize'],
    },
    spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
  });

beforeAll(async () => {
  rw = await spawnRewriter({ name: 'rewriter-system' });
  ns = await freshNamespace('rewriter');
});

afterAll(async () => {
  await rw.stop();
});

describe('kube-api-rewriter with kubectl and the real apiserver', () => {
  it('creates a kubevirt.io VirtualMachine that lands as an InternalVirtualizationVirtualMachine with renamed metadata', async () => {
    expect(await ok(viaProxy(['create', '-f', '-'], vmManifest('vm1')))).toContain('virtualmachine.kubevirt.io/vm1 created');
    const stored = JSON.parse(await ok(direct(['get', `internalvirtualizationvirtualmachines.${INT}`, 'vm1', '-n', ns, '-o', 'json']))) as {
      apiVersion: string;
      kind: string;
      metadata: { labels: Record<string, string>; annotations: Record<string, string>; finalizers: string[] };
    };
    expect(stored.apiVersion).toBe(`${INT}/v1`);
    expect(stored.kind).toBe('InternalVirtualizationVirtualMachine');
    expect(stored.metadata.labels).toEqual({
      [`kubevirt.${INT}/vm`]: 'vm1',
      'app.kubernetes.io/managed-by': 'virt-operator-internal-virtualization',
      app: 'web',
    });
    expect(stored.metadata.annotations[`kubevirt.${INT}/latest-observed-api-version`]).toBe('v1');
    expect(stored.metadata.finalizers).toEqual([`kubevirt.${INT}/virtualMachineControllerFinalize`]);

    const seen = JSON.parse(await ok(viaProxy(['get', 'virtualmachines.kubevirt.io', 'vm1', '-n', ns, '-o', 'json']))) as {
      apiVersion: string;
      kind: string;
      metadata: { labels: Record<string, string>; finalizers: string[] };
    };
    expect(seen.apiVersion).toBe('kubevirt.io/v1');
    expect(seen.kind).toBe('VirtualMachine');
    expect(seen.metadata.labels).toEqual({ 'kubevirt.io/vm': 'vm1', 'app.kubernetes.io/managed-by': 'virt-operator', app: 'web' });
    expect(seen.metadata.finalizers).toEqual(['kubevirt.io/virtualMachineControllerFinalize']);
  });

  it('patches through the proxy (merge, JSON Patch, kubectl label, server-side apply) and selects by original labels', async () => {
    await ok(
      viaProxy([
        'patch',
        'virtualmachines.kubevirt.io',
        'vm1',
        '-n',
        ns,
        '--type=merge',
        '-p',
        '{"metadata":{"labels":{"kubevirt.io/merged":"yes"}},"spec":{"runStrategy":"Always"}}',
      ]),
    );
    await ok(
      viaProxy([
        'patch',
        'virtualmachines.kubevirt.io',
        'vm1',
        '-n',
        ns,
        '--type=json',
        '-p',
        '[{"op":"add","path":"/metadata/labels/vm.kubevirt.io~1name","value":"vm1"}]',
      ]),
    );
    await ok(viaProxy(['label', 'virtualmachines.kubevirt.io', 'vm1', '-n', ns, 'kubevirt.io/labelled=1']));
    // Server-side apply twice: the field owners follow the renamed keys, so the second apply is a no-op, not a conflict.
    const applied = JSON.parse(vmManifest('vm1')) as { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
    applied.metadata.labels['kubevirt.io/applied'] = 'ssa';
    delete applied.spec['runStrategy'];
    for (let i = 0; i < 2; i++) await ok(viaProxy(['apply', '--server-side', '--field-manager=rewriter-test', '-f', '-'], JSON.stringify(applied)));
    const labels = JSON.parse(
      await ok(direct(['get', `internalvirtualizationvirtualmachines.${INT}`, 'vm1', '-n', ns, '-o', 'jsonpath={.metadata.labels}'])),
    ) as Record<string, string>;
    expect(labels).toMatchObject({
      [`kubevirt.${INT}/merged`]: 'yes',
      [`vm.${INT}/name`]: 'vm1',
      [`kubevirt.${INT}/labelled`]: '1',
      [`kubevirt.${INT}/applied`]: 'ssa',
    });
    expect(await ok(direct(['get', `internalvirtualizationvirtualmachines.${INT}`, 'vm1', '-n', ns, '-o', 'jsonpath={.spec.runStrategy}']))).toBe('Always');
    const names = await ok(
      viaProxy(['get', 'virtualmachines.kubevirt.io', '-n', ns, '-l', 'kubevirt.io/merged=yes,vm.kubevirt.io/name in (vm1)', '-o', 'name']),
    );
    expect(names.trim()).toBe('virtualmachine.kubevirt.io/vm1');
    // The list answer streams through the proxy item by item (items first): kubectl's JSON list and the raw one.
    const listed = JSON.parse(await ok(viaProxy(['get', 'virtualmachines.kubevirt.io', '-n', ns, '-l', 'kubevirt.io/merged=yes', '-o', 'json']))) as {
      items: { kind: string; metadata: { name: string; labels: Record<string, string> } }[];
    };
    expect(listed.items.map((i) => [i.kind, i.metadata.name, i.metadata.labels['kubevirt.io/merged']])).toEqual([['VirtualMachine', 'vm1', 'yes']]);
    const raw = JSON.parse(await ok(viaProxy(['get', '--raw', `/apis/kubevirt.io/v1/namespaces/${ns}/virtualmachines`]))) as {
      kind: string;
      apiVersion: string;
      metadata: { resourceVersion?: string };
      items: { apiVersion: string; kind: string }[];
    };
    expect([raw.kind, raw.apiVersion, typeof raw.metadata.resourceVersion, raw.items.map((i) => `${i.apiVersion} ${i.kind}`)]).toEqual([
      'VirtualMachineList',
      'kubevirt.io/v1',
      'string',
      ['kubevirt.io/v1 VirtualMachine'],
    ]);
    const missing = await viaProxy(['get', 'virtualmachines.kubevirt.io', 'nope', '-n', ns]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('virtualmachines.kubevirt.io "nope" not found');
  });

  it('delivers watch events renamed back as the changes happen in the apiserver', async () => {
    const { binDir } = getTestEnv();
    const watcher = spawn(
      join(binDir, 'kubectl'),
      [`--kubeconfig=${rw.kubeconfigPath}`, 'get', 'virtualmachines.kubevirt.io', '-n', ns, '--watch', '--output-watch-events', '-o', 'json'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    watcher.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    try {
      await waitFor('the initial ADDED event through the proxy', () => out.includes('"ADDED"'));
      await ok(direct(['label', `internalvirtualizationvirtualmachines.${INT}`, 'vm1', '-n', ns, `kubevirt.${INT}/watched=now`]));
      await waitFor('the MODIFIED event with the label restored', () => /"kubevirt\.io\/watched":\s*"now"/.test(out));
      await ok(viaProxy(['create', '-f', '-'], vmManifest('vm2')));
      await waitFor('the ADDED event of vm2', () => /"type":\s*"ADDED"[\s\S]*"name":\s*"vm2"/.test(out));
      expect(out).not.toContain(INT);
      expect(out).not.toContain('InternalVirtualization');
      expect(out).toMatch(/"kind":\s*"VirtualMachine"/);
    } finally {
      watcher.kill('SIGTERM');
    }
  });

  it('shows only kubevirt.io names in discovery', async () => {
    const resources = await ok(viaProxy(['api-resources', '-o', 'wide']));
    expect(resources).toMatch(/^virtualmachines\s+vm,vms\s+kubevirt\.io\/v1\s+true\s+VirtualMachine\s/m);
    expect(resources).toMatch(/^virtualmachineinstances\s+vmi,vmis\s+kubevirt\.io\/v1\s/m);
    expect(resources).not.toContain('internalvirtualization');
    expect(resources).not.toContain(INT);
    const groups = await ok(viaProxy(['get', '--raw', '/apis']));
    expect(groups).toContain('"kubevirt.io"');
    expect(groups).not.toContain(INT);
    const list = JSON.parse(await ok(viaProxy(['get', '--raw', '/apis/kubevirt.io/v1']))) as {
      groupVersion: string;
      resources: { name: string; kind: string }[];
    };
    expect(list.groupVersion).toBe('kubevirt.io/v1');
    expect(list.resources.map((r) => r.name)).toEqual(expect.arrayContaining(['virtualmachines', 'virtualmachines/status', 'virtualmachineinstances']));
    const crd = JSON.parse(await ok(viaProxy(['get', 'crd', 'virtualmachines.kubevirt.io', '-o', 'json']))) as {
      spec: { group: string; names: { kind: string; shortNames: string[] } };
    };
    expect(crd.spec.group).toBe('kubevirt.io');
    expect(crd.spec.names.kind).toBe('VirtualMachine');
    expect(crd.spec.names.shortNames).toEqual(['vm', 'vms']);
  });

  it('serves OpenAPI under kubevirt.io names (kubectl explain)', async () => {
    const explained = await ok(viaProxy(['explain', 'virtualmachines.kubevirt.io']));
    expect(explained).toMatch(/GROUP:\s+kubevirt\.io/);
    expect(explained).toMatch(/KIND:\s+VirtualMachine/);
    const index = await ok(viaProxy(['get', '--raw', '/openapi/v3']));
    expect(index).toContain('"apis/kubevirt.io/v1"');
    expect(index).not.toContain(INT);
  });

  it('renames labels and node selectors of built-in objects (pods) and passes other pods untouched', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'virt-launcher-vm1', namespace: ns, labels: { 'kubevirt.io': 'virt-launcher', 'vm.kubevirt.io/name': 'vm1' } },
      spec: { nodeSelector: { 'cpu-feature.node.kubevirt.io/vmx': 'true' }, containers: [{ name: 'compute', image: 'virt-launcher' }] },
    };
    await ok(viaProxy(['create', '-f', '-'], JSON.stringify(pod)));
    await ok(
      viaProxy(
        ['create', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'plain', namespace: ns, labels: { app: 'x' } },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        }),
      ),
    );
    const stored = JSON.parse(await ok(direct(['get', 'pod', 'virt-launcher-vm1', '-n', ns, '-o', 'json']))) as {
      metadata: { labels: Record<string, string> };
      spec: { nodeSelector: Record<string, string> };
    };
    expect(stored.metadata.labels).toEqual({ [`kubevirt.${INT}`]: 'virt-launcher', [`vm.${INT}/name`]: 'vm1' });
    expect(stored.spec.nodeSelector).toEqual({ 'cpu-feature.node.virtualization.deckhouse.io/vmx': 'true' });
    const selected = await ok(viaProxy(['get', 'pods', '-n', ns, '-l', 'kubevirt.io=virt-launcher', '-o', 'json']));
    const list = JSON.parse(selected) as { items: { metadata: { name: string; labels: Record<string, string> } }[] };
    expect(list.items.map((i) => i.metadata.name)).toEqual(['virt-launcher-vm1']);
    expect(list.items[0]?.metadata.labels).toEqual(pod.metadata.labels);
    const plain = JSON.parse(await ok(viaProxy(['get', 'pod', 'plain', '-n', ns, '-o', 'json']))) as { metadata: { labels: Record<string, string> } };
    expect(plain.metadata.labels).toEqual({ app: 'x' });
  });

  it('refuses malformed JSON with a clear 400 and keeps serving', async () => {
    const invalidJson = { side: 'request', reason: 'invalid_json' };
    const before = metricValue(await rw.metrics(), 'd8_virtualization_api_rewriter_rewrite_errors_total', invalidJson) ?? 0;
    const res = await fetch(`${rw.proxyUrl}/apis/kubevirt.io/v1/namespaces/${ns}/virtualmachines`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind": VirtualMachine',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/not valid JSON/);
    expect(await ok(viaProxy(['get', 'virtualmachines.kubevirt.io', '-n', ns, '-o', 'name']))).toContain('vm1');
    const m = await rw.metrics();
    expect(metricValue(m, 'd8_virtualization_api_rewriter_rewrite_errors_total', invalidJson)).toBe(before + 1);
    expect(
      metricValue(m, 'd8_virtualization_api_rewriter_requests_total', { proxy: 'kube-api', method: 'POST', decision: 'rewrite', watch: 'false', code: '201' }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe('kube-api-rewriter when the apiserver goes away mid-watch', () => {
  it('ends the client watch stream cleanly, without a partial event', async () => {
    const extra = await startExtraApiServer();
    const proxy = await spawnRewriter({ kubeconfigPath: extra.kubeconfigPath, name: 'rewriter-broken' });
    try {
      // A fresh apiserver answers 429 until its priority-and-fairness config is in place.
      await waitFor(
        'the extra apiserver to serve lists through the proxy',
        async () => (await fetch(`${proxy.proxyUrl}/apis/kubevirt.io/v1/namespaces/${ns}/virtualmachines`)).status === 200,
      );
      const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(`${proxy.proxyUrl}/apis/kubevirt.io/v1/namespaces/${ns}/virtualmachines?watch=true`, resolve).on('error', reject),
      );
      expect(res.statusCode).toBe(200);
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      const ended = new Promise<string>((resolve) => {
        res.on('end', () => resolve('end'));
        res.on('aborted', () => resolve('aborted'));
        res.on('error', () => resolve('error'));
      });
      await waitFor('the initial events', () => body.includes('"vm1"'));
      await extra.kill();
      expect(await ended).toBe('end');
      for (const line of body.split('\n').filter((l) => l !== '')) {
        expect((JSON.parse(line) as { object: { kind: string } }).object.kind).toBe('VirtualMachine');
      }
      expect(proxy.child.exitCode).toBeNull();
    } finally {
      await proxy.stop();
      await extra.stop().catch(() => undefined);
    }
  });
});
