/**
 * `npm start -- --kubeconfig PATH`: our units out-of-cluster against a given cluster (here an
 * apiserver of its own on the shared etcd, so that the install's webhooks intercept nothing else),
 * under their ServiceAccount tokens, changing nothing of the cluster but what the units do; and a
 * clear refusal when the install is not there.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { waitFor } from '../../../shared/testing/wait.js';
import { getTestEnv, installDeckhouseCrds, startExtraApiServer, type ExtraApiServer, type KubectlOptions } from '../../env/index.js';
import { kubectlOk, prepareApiServer } from '../install/knative-crds.js';
import { KNATIVE_DIR } from '../install/manifests.js';
import { npmStart, survivors } from './fixtures.js';

const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
let extra: ExtraApiServer;
let opts: KubectlOptions;
const workDirs: string[] = [];
const workDir = async (prefix: string): Promise<string> => {
  const dir = await mkdtemp(join(base, prefix));
  workDirs.push(dir);
  return dir;
};

beforeAll(async () => {
  extra = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/platform-${randomBytes(4).toString('hex')}`] });
  opts = { kubeconfigPath: extra.kubeconfigPath };
}, 120_000);

afterAll(async () => {
  await extra?.stop();
  if (process.env['VIRT_TESTENV_KEEP'] !== '1') await Promise.all(workDirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('npm start --kubeconfig', () => {
  it('refuses a cluster without the install, saying what to apply', async () => {
    const run = npmStart(['--kubeconfig', extra.kubeconfigPath, '--no-demo', '--work-dir', await workDir('platform-noinstall-')]);
    expect(await run.exited).toBe(1);
    expect(run.lines.join('\n')).toMatch(/the install is not applied to that cluster.*kubectl apply -k knative\//s);
  }, 60_000);

  it('runs our units against the cluster under their own ServiceAccounts, and stops them on SIGINT', async () => {
    await prepareApiServer(opts);
    await installDeckhouseCrds(extra.kubeconfigPath);
    await kubectlOk(['apply', '--server-side', '--field-manager=virtualization-install', '-k', KNATIVE_DIR], opts);
    const dir = await workDir('platform-external-');
    const run = npmStart(['--kubeconfig', extra.kubeconfigPath, '--no-demo', '--work-dir', dir]);
    try {
      await run.line(/platform ready in/, 150_000);
      // The controller's certificate manager issued the admission certificate in that cluster.
      const secret = await kubectlOk(['-n', 'd8-virtualization', 'get', 'secret', 'admission-tls', '-o', 'jsonpath={.data.tls\\.crt}'], opts);
      expect(secret.length).toBeGreaterThan(100);
      expect(run.lines.join('\n')).not.toMatch(/kwok|kube-scheduler|kubevirt-simulator/);
    } finally {
      run.interrupt();
    }
    await run.exited;
    await run.line(/stopped; /, 60_000);
    expect(run.lines.join('\n')).toContain('SIGINT: stopping');
    await waitFor('every unit gone', () => survivors(dir).length === 0, { timeoutMs: 30_000 });
    // Every write of the controller came with its ServiceAccount's token, none as admin.
    const writes = await waitFor('the Secret create in the audit log', async () => {
      const log = await readFile(getTestEnv().auditLogPath, 'utf8');
      const events = log
        .split('\n')
        .filter((l) => l.includes('"admission-tls"') && l.includes('"verb":"create"') && l.includes('"stage":"ResponseComplete"'))
        .map((l) => JSON.parse(l) as { user: { username: string }; responseStatus?: { code?: number } });
      return events.length > 0 && events;
    });
    expect(writes.map((e) => e.user.username)).toContain('system:serviceaccount:d8-virtualization:controller');
  }, 240_000);
});
