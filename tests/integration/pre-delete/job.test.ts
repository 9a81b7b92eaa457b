import { afterAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { EXIT, runJob } from '../../../functions/pre-delete/run-job.js';
import { freshNamespace, installDeckhouseCrds, newKubeConfig } from '../../env/index.js';
import { adminKube, cdi, createTarget, deletionRequested, envFor, FINALIZER, kubeVirt, read, releaseFinalizers, setModuleConfig } from './fixtures.js';

const kube = adminKube();
afterAll(() => kube.close());

describe('the pre-delete Job against the real apiserver', () => {
  it('deletes objects held by finalizers once the finalizers are removed, and exits 0', async () => {
    const ns = await freshNamespace('pre-delete');
    const targets = [kubeVirt(ns), cdi()];
    for (const t of targets) await createTarget(kube, t, [FINALIZER]);
    // The deadline only has to outlast this test's own steps; the Job ends as soon as the objects are gone.
    const job = runJob(envFor(targets, '50s'));
    for (const t of targets) await deletionRequested(kube, t);
    expect(await read(kube, targets[0] ?? kubeVirt(ns))).toBeDefined();
    for (const t of targets) await releaseFinalizers(kube, t);
    await expect(job).resolves.toBe(EXIT.done);
    expect(await Promise.all(targets.map((t) => read(kube, t)))).toEqual([undefined, undefined]);
  });

  it('exits 1 when the deadline passes while a finalizer still holds an object', async () => {
    const ns = await freshNamespace('pre-delete');
    const target = kubeVirt(ns);
    await createTarget(kube, target, [FINALIZER]);
    // That the wait lasts exactly until the deadline (and checks once more there) is proved on a fake
    // clock in functions/pre-delete/cleanup.test.ts; here the real apiserver keeps the object held.
    await expect(runJob(envFor([target], '1s'))).resolves.toBe(EXIT.incomplete);
    expect((await read(kube, target))?.metadata.deletionTimestamp).toBeDefined();
    await releaseFinalizers(kube, target);
  });

  it('touches nothing else in the namespace: other KubeVirt objects and ConfigMaps keep their resourceVersion', async () => {
    const ns = await freshNamespace('pre-delete');
    const other = kubeVirt(ns, 'other');
    const keptKubeVirt = await createTarget(kube, other);
    const core = newKubeConfig().makeApiClient(CoreV1Api);
    const keptMap = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'config' }, data: { a: 'b' } } });
    await createTarget(kube, kubeVirt(ns));
    await expect(runJob(envFor([kubeVirt(ns)], '10s'))).resolves.toBe(EXIT.done);
    expect((await read(kube, other))?.metadata.resourceVersion).toBe(keptKubeVirt.metadata.resourceVersion);
    const map = await core.readNamespacedConfigMap({ namespace: ns, name: 'config' });
    expect(map.metadata?.resourceVersion).toBe(keptMap.metadata?.resourceVersion);
    expect((await core.readNamespace({ name: ns })).metadata?.deletionTimestamp).toBeUndefined();
  });

  it('succeeds at once on a second run with nothing left to delete', async () => {
    const ns = await freshNamespace('pre-delete');
    const targets = [kubeVirt(ns), cdi()];
    for (const t of targets) await createTarget(kube, t);
    await expect(runJob(envFor(targets, '10s'))).resolves.toBe(EXIT.done);
    // A deadline of 1 ms leaves no time to wait for anything: only finding nothing to delete succeeds.
    await expect(runJob(envFor(targets, '1ms'))).resolves.toBe(EXIT.done);
  });

  it('exits 3 and deletes nothing while the apiserver has the ModuleConfig enabled', async () => {
    await installDeckhouseCrds();
    const target = kubeVirt(await freshNamespace('pre-delete'), 'config-enabled');
    await createTarget(kube, target);
    await setModuleConfig(kube, true);
    try {
      await expect(runJob(envFor([target], '10s'))).resolves.toBe(EXIT.notConfirmed);
      expect((await read(kube, target))?.metadata.deletionTimestamp).toBeUndefined();
    } finally {
      await setModuleConfig(kube, undefined);
    }
  });

  it('exits 2 without touching anything when its configuration is broken', async () => {
    const ns = await freshNamespace('pre-delete');
    const target = kubeVirt(ns);
    await createTarget(kube, target);
    await expect(runJob({ ...envFor([target], '10s'), WAIT_TIMEOUT: 'forever' })).resolves.toBe(EXIT.badConfig);
    expect(await read(kube, target)).toBeDefined();
  });
});
