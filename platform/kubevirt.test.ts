import { afterAll, describe, expect, it } from '@jest/globals';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoggedProcess } from '../tests/env/process.js';
import { installFlags, kubeVirtConfig, planKubeVirt, rewriterWebhookEnv, startKubeVirt, writeRewriterKubeconfig } from './kubevirt.js';

const dir = mkdtempSync(join(tmpdir(), 'kubevirt-setup-'));
const started: LoggedProcess[] = [];
afterAll(async () => {
  for (const p of started) await p.stop(1_000);
  rmSync(dir, { recursive: true, force: true });
});

function script(name: string, body: string): void {
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
}

describe('the real KubeVirt set-up', () => {
  it('points the rewriter webhook proxy at virt-api on its own certificate, and writes a credential-free kubeconfig for the proxy', async () => {
    const plan = await planKubeVirt(join(dir, 'plan'));
    expect(rewriterWebhookEnv(plan)).toEqual({
      WEBHOOK_ADDRESS: `https://127.0.0.1:${plan.ports.virtApi}`,
      WEBHOOK_PROXY_HOST: '127.0.0.1',
      WEBHOOK_PROXY_PORT: String(plan.ports.webhookProxy),
      WEBHOOK_CERT_FILE: plan.webhookProxyCert.certPath,
      WEBHOOK_KEY_FILE: plan.webhookProxyCert.keyPath,
    });
    // virt-api, its console server and the webhook proxy (virt-controller listens where the kernel puts it).
    expect(new Set(Object.values(plan.ports)).size).toBe(3);
    expect(plan.caPem).toContain('BEGIN CERTIFICATE');
    const path = await writeRewriterKubeconfig(join(dir, 'via.kubeconfig'), 'http://127.0.0.1:1');
    const kubeconfig = JSON.parse(readFileSync(path, 'utf8')) as { clusters: { cluster: { server: string } }[]; users: { user: object }[] };
    expect(kubeconfig.clusters[0]?.cluster.server).toBe('http://127.0.0.1:1');
    expect(kubeconfig.users[0]?.user).toEqual({});
  });

  it('fails at once, with the log of virt-api, when virt-api exits while starting; no webhook is registered', async () => {
    script('virt-api', 'echo "simulated: cannot bind 127.0.0.1" >&2; exit 1');
    script('virt-controller', 'exec sleep 60');
    const plan = await planKubeVirt(join(dir, 'broken'));
    const kubectl: string[][] = [];
    const start = startKubeVirt(plan, {
      binDir: dir,
      kubectl: (args) => {
        kubectl.push(args);
        return Promise.resolve('');
      },
      rewriterKubeconfig: join(dir, 'via.kubeconfig'),
      logDir: join(dir, 'logs'),
      started: (p) => started.push(p),
    });
    await expect(start).rejects.toThrow(/virt-api exited while starting; its log .*virt-api\.log ends with:\n[^]*simulated: cannot bind 127\.0\.0\.1/);
    expect(kubectl).toEqual([]);
    expect(started.map((p) => p.name)).toEqual(['virt-api', 'virt-controller']);
  });

  it("passes the install's virt-controller flags to the local virt-controller (no evacuation workers), never its in-cluster kubeconfig", () => {
    expect(installFlags('controller')).toEqual(['--evacuation-controller-threads', '0']);
    expect(installFlags('api')).toEqual([]);
  });

  it('refuses install flags of the wrong shape, naming the field', () => {
    const withFlags = (flags: unknown): ReturnType<typeof kubeVirtConfig> => {
      const doc = kubeVirtConfig();
      (doc.spec as Record<string, unknown>)['customizeComponents'] = { flags: { controller: flags } };
      return doc;
    };
    expect(() => installFlags('controller', withFlags({ 'evacuation-controller-threads': 0 }))).toThrow(
      /flags\.controller\.evacuation-controller-threads of .*kubevirt-config\.yaml is not a string/,
    );
    expect(() => installFlags('controller', withFlags('--v 2'))).toThrow(/flags\.controller of .* is not a map/);
    expect(installFlags('controller', withFlags({ logtostderr: '' }))).toEqual(['--logtostderr']);
  });
});
