/**
 * Disks' and images' infrastructure under `npm start` (no demo, KubeVirt simulated: the lighter
 * platform), checked from the apiserver and DVCR while it runs: `kubectl get storageprofiles` lists one
 * StorageProfile per StorageClass (a class added gets one, a class deleted loses it), and DVCR garbage
 * collection runs on the ModuleConfig's schedule (`--dvcr-gc-schedule`): an image in DVCR whose object
 * does not exist is deleted and the run's result is the Deployment `dvcr`'s GarbageCollection
 * condition. Bad input: a schedule that is not a cron schedule is refused with exit code 2, naming it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../../shared/kube/index.js';
import { RegistryClient } from '../../../shared/oci/client.js';
import { parseImageReference } from '../../../shared/oci/reference.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { kubectlFor, type Kubectl } from '../../../platform/install.js';
import { SIMULATED_CLASS_NAMES } from '../../../platform/simulators/storage-simulator/classes.js';
import { getTestEnv } from '../../env/index.js';
import { pushTestImage } from '../../env/local-registry.js';
import { deploymentsClient, gcCondition } from '../controller/dvcr-gc-fixtures.js';
import { npmStart, survivors, type StartRun } from './fixtures.js';

const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
/** A run starts at the next whole minute; two of them fit. */
const GC_RUN = 150_000;

let workDir: string;
let run: StartRun;
let kube: KubeClient;
let kubectl: Kubectl;
let dvcrUrl: string;

beforeAll(async () => {
  workDir = await mkdtemp(join(base, 'platform-storage-'));
  run = npmStart(['--no-demo', '--work-dir', workDir, '--dvcr-gc-schedule', '* * * * *'], { VIRT_TESTENV_KUBEVIRT_DIR: join(workDir, 'no-kubevirt') });
  // Ready, or the run's own failure at once (its FAILED line and log) rather than a timeout.
  const ready = await Promise.race([
    run.line(/platform ready in/, 480_000),
    run.exited.then((code) => Promise.reject(new Error(`exit ${String(code)}`))),
  ]).catch((err: unknown) => {
    throw new Error(`npm start did not get ready:\n${run.tail()}`, { cause: err });
  });
  const kubeconfigPath = ready.replace(/^.*export KUBECONFIG=/, '').trim();
  kube = KubeClient.fromSource({ kubeconfigPath });
  kubectl = kubectlFor(getTestEnv().binDir, kubeconfigPath);
  dvcrUrl = `http://${/DVCR: docker-registry at http:\/\/(127\.0\.0\.1:\d+)/.exec(run.lines.join('\n'))?.[1] ?? '?'}`;
}, 540_000);

afterAll(async () => {
  kube?.close();
  run?.interrupt();
  await run?.exited;
  if (workDir !== undefined && process.env['VIRT_TESTENV_KEEP'] !== '1') await rm(workDir, { recursive: true, force: true });
});

const names = async (...what: string[]): Promise<string[]> =>
  (await kubectl(['get', ...what, '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}']))
    .split('\n')
    .filter((l) => l !== '')
    .sort();

describe('npm start: storage', () => {
  it('lists one StorageProfile per StorageClass in kubectl get storageprofiles, following classes added and deleted', async () => {
    const classes = await names('storageclasses');
    expect(classes).toEqual([...SIMULATED_CLASS_NAMES].sort());
    await waitFor('one StorageProfile per StorageClass', async () => JSON.stringify(await names('storageprofiles')) === JSON.stringify(classes));
    const table = await kubectl(['get', 'storageprofiles']);
    for (const name of classes) expect(table).toMatch(new RegExp(`^${name}\\s`, 'm'));

    const extra = 'added-by-test';
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: extra }, provisioner: 'example.com/none' }),
    );
    await waitFor('a StorageProfile for the added class', async () => (await names('storageprofiles')).includes(extra));
    await kubectl(['delete', 'storageclass', extra]);
    await waitFor('its StorageProfile gone with it', async () => JSON.stringify(await names('storageprofiles')) === JSON.stringify(classes));
  }, 120_000);

  it(
    "collects DVCR garbage on the ModuleConfig's schedule: an image whose object does not exist is deleted, the result on the Deployment dvcr",
    async () => {
      expect(run.lines.join('\n')).toMatch(/DVCR garbage collection: schedule "\* \* \* \* \*"/);
      const settings = JSON.parse(await kubectl(['get', 'moduleconfig', 'virtualization', '-o', 'jsonpath={.spec.settings.dvcr.gc}'])) as unknown;
      expect(settings).toEqual({ schedule: '* * * * *' });
      const ghost = `vi/default/ghost-${randomUUID().slice(0, 8)}`;
      await pushTestImage(dvcrUrl, ghost, randomUUID(), 'an image whose VirtualImage never existed');
      const repo = new RegistryClient(parseImageReference(`${dvcrUrl}/${ghost}`));
      expect((await repo.listTags()).length).toBe(1);

      const deployments = deploymentsClient(kube);
      const done = await waitFor(
        'a completed run that deleted the image',
        async () => {
          const condition = gcCondition(await deployments.get({ namespace: 'd8-virtualization', name: 'dvcr' }));
          return (
            condition?.reason === 'Completed' &&
            /Deleted [1-9]\d* image\(s\)/.test(condition.message ?? '') &&
            (await repo.listTags()).length === 0 &&
            condition
          );
        },
        { timeoutMs: GC_RUN },
      );
      expect(done).toMatchObject({ status: 'False', reason: 'Completed' });
      expect(done.message).toMatch(/blobs freed\./);
      await waitFor('the run Secret deleted', async () => !(await names('secrets', '-n', 'd8-virtualization')).includes('dvcr-garbage-collection'));
    },
    GC_RUN + 30_000,
  );

  it('refuses a --dvcr-gc-schedule that is not a cron schedule with exit code 2, naming the field at fault', async () => {
    const bad = npmStart(['--dvcr-gc-schedule', '0 25 * * *']);
    expect(await bad.exited).toBe(2);
    expect(bad.lines.join('\n')).toContain('--dvcr-gc-schedule must be a five-field cron schedule (or off), got "0 25 * * *": hour "25"');
  }, 60_000);

  it('stops everything on Ctrl-C with exit code 0', async () => {
    run.interrupt();
    expect(await run.exited).toBe(0);
    expect(survivors(workDir)).toEqual([]);
  }, 60_000);
});
