/**
 * DVCR garbage collection against the real apiserver and a real registry (DVCR): images imported by
 * the real importer, one deleted, a run (the Secret the schedule creates) → the deleted image's
 * manifests and blobs are gone (blobs by the registry's own garbage-collect, DVCR_GC_COMMAND), the
 * live image and a repository that is not ours are untouched, the result is the Deployment `dvcr`'s
 * GarbageCollection condition. An import under way holds the run; one created meanwhile is postponed
 * and goes on afterwards. A registry that fails (500, garbage, unreachable) ends the run with an Error
 * condition naming it, and the next run still works.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import type { KubeClient, ResourceClient } from '../../../../shared/kube/index.js';
import { RegistryClient, RegistryError } from '../../../../shared/oci/client.js';
import { parseImageReference } from '../../../../shared/oci/reference.js';
import { makeImage, serveDir, type FileServer } from '../../../../shared/testing/disk-images.js';
import { startController, type RunningController } from '../../../../daemons/controller/controller.js';
import type { Clients } from '../../../../daemons/controller/kube/resources.js';
import { makeStorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';
import { freshNamespace } from '../../../env/index.js';
import { garbageCollectCommand, pushTestImage } from '../../../env/local-registry.js';
import { GC_SECRET, createDvcrDeployment, deploymentsClient, gcCondition, runEnds as runEndsIn, type Deployment } from '../dvcr-gc-fixtures.js';
import { TEST_FIELD_MANAGER, controllerConfig, eventually, gone, mainKube, newScope, phaseIs, readWhen, testClients, type Scope } from '../fixtures.js';
import { startImportRig, type ImportRig } from './import-rig.js';

const IMPORT = 120_000;
jest.setTimeout(5 * IMPORT);

let kube: KubeClient;
let c: Clients;
let deployments: ResourceClient<Deployment>;

/** What the schedule does: create the run's Secret. */
async function startRun(namespace: string): Promise<void> {
  await c.secrets.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: GC_SECRET, namespace } });
}

const runEnds = (namespace: string, reason: 'Completed' | 'Error'): Promise<string> => runEndsIn(c, deployments, namespace, reason, IMPORT);

beforeAll(() => {
  kube = mainKube();
  c = testClients(kube);
  deployments = deploymentsClient(kube);
});

afterAll(() => {
  kube.close();
});

describe('DVCR garbage collection with a real registry and the real importer', () => {
  let scope: Scope;
  let ns: string;
  let rig: ImportRig;
  let slowFiles: FileServer;

  beforeAll(async () => {
    scope = newScope(await freshNamespace('dvcr-gc'));
    ns = scope.namespace;
    rig = await startImportRig({
      kube,
      sc: makeStorageClients(kube, TEST_FIELD_MANAGER),
      scope,
      classPrefix: 'dvcr-gc',
      makeFiles(dir) {
        makeImage(dir, 'keep.raw', 'raw', 2, 64);
        makeImage(dir, 'gone.raw', 'raw', 3, 96);
        makeImage(dir, 'slow.raw', 'raw', 12, 128);
        makeImage(dir, 'late.raw', 'raw', 2, 32);
      },
      env: (registry) => ({ DVCR_GC_COMMAND: garbageCollectCommand(registry) }),
    });
    slowFiles = await serveDir(rig.filesDir, { bytesPerSecond: 512 * 1024 });
    await createDvcrDeployment(deployments, ns);
  });

  afterAll(async () => {
    await slowFiles.close();
    await rig.stop();
  });

  const vi = (name: string, url: string): VirtualImage => ({
    apiVersion: API_VERSION,
    kind: 'VirtualImage',
    metadata: { name, namespace: ns },
    spec: { storage: 'ContainerRegistry', dataSource: { type: 'HTTP', http: { url } } },
  });
  const ready = (name: string): Promise<VirtualImage> =>
    readWhen<VirtualImage>(() => c.images.get({ namespace: ns, name }), phaseIs('Ready'), `VirtualImage ${name} Ready`, IMPORT);
  const repo = (path: string): RegistryClient => new RegistryClient(parseImageReference(`${rig.registry.url}/${path}`));

  it("deletes the repository of a deleted image, manifests and blobs, and leaves a live image's and a foreign one untouched", async () => {
    await c.images.create(vi('keep', `${rig.files.url}/keep.raw`));
    await c.images.create(vi('gone', `${rig.files.url}/gone.raw`));
    const keep = await ready('keep');
    const goneImg = await ready('gone');
    const foreign = await pushTestImage(rig.registry.url, 'library/other', 'v1', 'not an image of ours');
    const goneRef = repo(`vi/${ns}/gone:${goneImg.metadata.uid ?? ''}`);
    const goneLayers = (await goneRef.getManifest()).manifest.layers ?? [];
    const keepRef = repo(`vi/${ns}/keep:${keep.metadata.uid ?? ''}`);
    const keepLayers = (await keepRef.getManifest()).manifest.layers ?? [];
    expect(goneLayers.length).toBeGreaterThan(0);

    await c.images.delete({ namespace: ns, name: 'gone' });
    await eventually(() => gone(() => c.images.get({ namespace: ns, name: 'gone' })), 'VirtualImage gone deleted', IMPORT);
    await startRun(ns);
    const message = await runEnds(ns, 'Completed');
    expect(message).toMatch(/Deleted 1 image\(s\) of objects that no longer exist \(1 repositories emptied\); blobs freed\./);

    expect(await repo(`vi/${ns}/gone`).listTags()).toEqual([]);
    expect(await goneRef.resolveDigest()).toBeUndefined();
    for (const layer of goneLayers) {
      const err = await goneRef.getBlob(layer.digest).then(
        (res) => (res.body.resume(), undefined),
        (e: unknown) => e,
      );
      expect((err as RegistryError).upstreamStatus).toBe(404);
    }
    expect(await repo(`vi/${ns}/keep`).listTags()).toEqual([keep.metadata.uid]);
    for (const layer of keepLayers) (await keepRef.getBlob(layer.digest)).body.resume();
    expect(await repo('library/other:v1').resolveDigest()).toBe(foreign.manifest);
    expect((await c.images.get({ namespace: ns, name: 'keep' })).status?.phase).toBe('Ready');
  });

  it('waits for an import under way, postpones one created during the run, and both end Ready with their images kept', async () => {
    await c.images.create(vi('slow', `${slowFiles.url}/slow.raw`));
    await readWhen(
      () => c.images.get({ namespace: ns, name: 'slow' }),
      (x) => x.status?.conditions?.some((k) => k.type === 'Ready' && k.reason === 'Provisioning') === true,
      'VirtualImage slow Provisioning',
      IMPORT,
    );
    await startRun(ns);
    await readWhen(
      () => deployments.get({ namespace: ns, name: 'dvcr' }),
      (x) => /Wait for cvi\/vi\/vd finish provisioning: 1 resources remain/.test(gcCondition(x)?.message ?? ''),
      'the run waiting for the import under way',
      IMPORT,
    );
    await c.images.create(vi('late', `${rig.files.url}/late.raw`));
    const postponed = await readWhen(
      () => c.images.get({ namespace: ns, name: 'late' }),
      (x) => x.status?.conditions?.some((k) => k.type === 'Ready' && k.reason === 'ProvisioningPostponed') === true,
      'VirtualImage late postponed',
      IMPORT,
    );
    expect(postponed.status?.phase).toBe('Pending');
    await runEnds(ns, 'Completed');
    const slow = await ready('slow');
    const late = await ready('late');
    expect(await repo(`vi/${ns}/slow`).listTags()).toEqual([slow.metadata.uid]);
    expect(await repo(`vi/${ns}/late`).listTags()).toEqual([late.metadata.uid]);
  });
});

describe('DVCR garbage collection against a registry that fails', () => {
  let scope: Scope;
  let ns: string;
  let server: Server;
  let mode: 'garbage' | '500' | 'ok' = 'ok';
  let controller: RunningController;
  const abort = new AbortController();

  beforeAll(async () => {
    scope = newScope(await freshNamespace('dvcr-gc-bad'));
    ns = scope.namespace;
    server = createServer((req, res) => {
      if (mode === '500') return void res.writeHead(500).end('registry storage driver failure');
      if (mode === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>captive portal</html>');
      res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.startsWith('/v2/_catalog') === true ? '{"repositories":[]}' : '{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await createDvcrDeployment(deployments, ns);
    const config = controllerConfig(scope, {
      STORAGE_RECONCILERS: 'true',
      POD_NAMESPACE: ns,
      DVCR_ADDRESS: `127.0.0.1:${String(port)}`,
      DVCR_PLAIN_HTTP: 'true',
    });
    controller = await startController({ kube, config, signal: abort.signal });
  });

  afterAll(async () => {
    abort.abort();
    await controller.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['answers 500', '500' as const, /DVCR garbage collection failed: listing the catalog: 127\.0\.0\.1:\d+ answered HTTP 500 registry storage driver failure/],
    ['answers garbage', 'garbage' as const, /DVCR garbage collection failed: listing the catalog: .* not the expected JSON: <html>captive portal/],
  ])('a registry that %s ends the run with an Error naming it', async (_what, m, message) => {
    mode = m;
    await startRun(ns);
    expect(await runEnds(ns, 'Error')).toMatch(message);
  });

  it('the controller keeps serving: the next run against a working registry completes', async () => {
    mode = 'ok';
    await startRun(ns);
    expect(await runEnds(ns, 'Completed')).toMatch(/Deleted 0 image\(s\)/);
  });

  it('an unreachable registry ends the run with an Error naming the host', async () => {
    await new Promise((resolve) => server.close(resolve));
    await startRun(ns);
    expect(await runEnds(ns, 'Error')).toMatch(/DVCR garbage collection failed: cannot reach 127\.0\.0\.1:\d+/);
    server = createServer((_req, res) => res.end());
  });
});
